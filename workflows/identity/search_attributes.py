"""Custom search attributes, so operators can filter sessions and graphs in the Web UI.

`synapse up` registers them on the dev server (`--search-attribute NAME=TYPE`); on a real
cluster register them once with `temporal operator search-attribute create`.
"""

from temporalio.common import SearchAttributeKey

STATUS = SearchAttributeKey.for_keyword("SynapseStatus")
"""running, waiting_approval, waiting_input, paused, completed, cancelled or failed."""
PENDING = SearchAttributeKey.for_int("SynapsePending")
"""Number of interactions waiting for a person."""
CHANNEL = SearchAttributeKey.for_keyword("SynapseChannel")
"""Channel the session belongs to: http, lark, dingtalk, cli."""
ASSIGNEE = SearchAttributeKey.for_keyword("SynapseAssignee")
"""The agent (`Agent:<name>`) or group running the work."""

SEARCH_ATTRIBUTES = (STATUS, PENDING, CHANNEL, ASSIGNEE)
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
