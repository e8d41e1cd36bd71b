"""Custom search attributes, so operators can filter sessions and graphs in the Web UI.

`synapse up` registers them on the dev server (`--search-attribute NAME=TYPE`); on a real
cluster register them once with `temporal operator search-attribute create`.
"""

from collections.abc import Sequence
from typing import Any

from temporalio import workflow
from temporalio.common import (
    SearchAttributeKey,
    SearchAttributePair,
    SearchAttributeUpdate,
    TypedSearchAttributes,
)

STATUS = SearchAttributeKey.for_keyword("SynapseStatus")
"""running, waiting_approval, waiting_input, paused, completed, cancelled or failed."""
PENDING = SearchAttributeKey.for_int("SynapsePending")
"""Number of interactions waiting for a person."""
CHANNEL = SearchAttributeKey.for_keyword("SynapseChannel")
"""Channel the session belongs to: http, lark, dingtalk, cli."""
ASSIGNEE = SearchAttributeKey.for_keyword("SynapseAssignee")
"""The agent (`Agent:<name>`) or group running the work."""
PROJECT = SearchAttributeKey.for_keyword("SynapseProject")
"""The project a session or graph works in, set when the API starts it and never upserted (a
continued run keeps it); absent without a project. Keys scoped to projects list and reach only
their projects' workflows by it."""

SEARCH_ATTRIBUTES = (STATUS, PENDING, CHANNEL, ASSIGNEE, PROJECT)
"""A graph's task runs carry none of these (each one written per run costs the server a visibility
update; a 500-task fan-out took 1.3x as long with two of them): they are found by Temporal's own
`ParentWorkflowId = "graph:<uuid>"`."""


def dev_server_flags() -> list[str]:
    """`temporal server start-dev` flags that register every Synapse search attribute."""
    kinds = {"KEYWORD": "Keyword", "INT": "Int"}
    flags: list[str] = []
    for key in SEARCH_ATTRIBUTES:
        flags += ["--search-attribute", f"{key.name}={kinds[key.indexed_value_type.name]}"]
    return flags


def at_start(updates: Sequence[SearchAttributeUpdate[Any]]) -> TypedSearchAttributes:
    """The values a workflow is started with, for its first status to need no upsert."""
    return TypedSearchAttributes([SearchAttributePair(update.key, update.value) for update in updates])


def project_of(project: str | None) -> list[SearchAttributeUpdate[Any]]:
    """The `SynapseProject` value a run starts with: none without a project."""
    return [PROJECT.value_set(project)] if project is not None else []


def unchanged(update: SearchAttributeUpdate[Any]) -> bool:
    """Whether the run already has this value (set when it started, or by an earlier upsert)."""
    return workflow.info().typed_search_attributes.get(update.key) == update.value


def upsert(updates: Sequence[SearchAttributeUpdate[Any]]) -> None:
    """Show the run's state in its search attributes: only the values that differ from the run's
    (its first status is set when it starts); none: no command (an upsert is a history event and a
    visibility write on the server)."""
    changed = [update for update in updates if not unchanged(update)]
    if changed:
        workflow.upsert_search_attributes(changed)
