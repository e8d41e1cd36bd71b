"""Which project a workflow belongs to, for keys scoped to projects (`Caller.projects`).

A session or graph the API starts carries its project as the search attribute `SynapseProject`
(set at start, never upserted; a continued run keeps it). A graph a session starts and a graph's
task runs carry none: they belong to their parent's, found through the parent Temporal records
(`describe`). A scoped key reaches only workflows of its projects, never one without a project
(`Caller.may_act_in`); any other is `NotFound` in the same words as one that never existed, so a
key learns nothing of other projects. Listings ask visibility for `SynapseProject IN (...)`.

A run's project does not change, so answers are kept for a short while (`Owners`).

An artifact belongs to the projects it was uploaded for and to the projects of the workflows that
stored it (`core.artifacts.owners`; and the workflow that stored it first, recorded with it, for
artifacts older than those records): a scoped key reads it when one of those is one of its own.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from dataclasses import dataclass

from temporalio.client import Client
from temporalio.service import RPCError

from core.artifacts.owners import Ownership
from core.security import Caller
from workflows.identity.search_attributes import PROJECT

from .errors import NotFound
from .ref import WorkflowRef
from .workflow import is_not_found

MAX_PARENTS = 4
"""How far up a workflow's parents its project is looked for (a session's graph's task run: 2)."""


@dataclass(frozen=True)
class Owner:
    """What a workflow id stands for: whether it exists, and its project (or its parent's)."""

    exists: bool
    project: str | None = None


class Owners:
    """The project of each workflow id asked about lately: at most `size` ids, each for `ttl`
    seconds (a session key reused for another project's session is seen after that)."""

    def __init__(self, size: int = 4096, ttl: float = 30.0) -> None:
        self._size, self._ttl = size, ttl
        self._kept: OrderedDict[str, tuple[float, Owner]] = OrderedDict()

    async def of(self, client: Client, workflow_id: str) -> Owner:
        """The owner of `workflow_id` (its latest run's project, or its parent's)."""
        now = time.monotonic()
        kept = self._kept.get(workflow_id)
        if kept is not None and now - kept[0] < self._ttl:
            return kept[1]
        found = await described(client, workflow_id)
        if found.exists:  # a missing one is asked again: it may be started any moment
            self._kept[workflow_id] = (now, found)
            self._kept.move_to_end(workflow_id)
            while len(self._kept) > self._size:
                self._kept.popitem(last=False)
        return found


async def described(client: Client, workflow_id: str) -> Owner:
    """The owner Temporal records: the latest run's `SynapseProject`, else its parent's."""
    for _ in range(MAX_PARENTS):
        try:
            description = await client.get_workflow_handle(workflow_id).describe()
        except RPCError as err:
            if is_not_found(err):
                return Owner(exists=False)
            raise
        project = description.typed_search_attributes.get(PROJECT)
        if project is not None or description.parent_id is None:
            return Owner(exists=True, project=project)
        workflow_id = description.parent_id
    return Owner(exists=True)


async def check(
    client: Client, owners: Owners, caller: Caller, target: WorkflowRef, *, may_start: bool = False
) -> Owner:
    """The owner of the target's workflow, when `caller` may reach it; else `NotFound` (`no <name>`),
    as for a workflow that never existed. `may_start`: a missing one is no error (the call starts it)."""
    if caller.projects is None:
        return Owner(exists=True)
    owner = await owners.of(client, target.workflow_id)
    if (owner.exists and not caller.may_act_in(owner.project)) or (not owner.exists and not may_start):
        raise NotFound(f"no {target.name}")
    return owner


async def reaches_artifact(
    client: Client, owners: Owners, caller: Caller, owned: Ownership, first_owner: str | None
) -> bool:
    """Whether `caller` may read an artifact owned as `owned` (`first_owner`: the workflow id kept
    with its content, if any): an unscoped caller always; a scoped one when the artifact was
    uploaded for one of its projects or stored by a workflow of one."""
    if caller.projects is None or owned.projects & caller.projects:
        return True
    for workflow_id in sorted({*owned.workflows, *([first_owner] if first_owner else [])}):
        owner = await owners.of(client, workflow_id)
        if owner.exists and caller.may_act_in(owner.project):
            return True
    return False


def project_to_start(caller: Caller, project: str | None) -> str | None:
    """The project a workflow `caller` starts works in: the one named, else a scoped key's only
    project (None for an unscoped key). Whether the caller may act in it is checked where the
    session's floor is.

    Raises:
        ValueError: A key scoped to several projects named none; the message says which to name.
    """
    if project is not None or caller.projects is None:
        return project
    if len(caller.projects) == 1:
        return next(iter(caller.projects))
    raise ValueError(
        f"project: the key of {caller.principal or 'the caller'} acts in several projects "
        f"({', '.join(sorted(caller.projects))}); name the one this works in"
    )


def not_its_project(caller: Caller, project: str | None) -> str:
    """Why `caller` may not start or upload in `project` (a 403's words)."""
    return f"project {project!r} is not one the key acts in ({', '.join(sorted(caller.projects or ()))})"


def visible_to(caller: Caller) -> str:
    """The visibility query clause that keeps a listing to `caller`'s projects ('' for every one).

    Project names of keys hold no quote (`core.security`), so they stand in the query as they are.
    """
    if caller.projects is None:
        return ""
    names = ", ".join(f"'{name}'" for name in sorted(caller.projects))
    return f" AND {PROJECT.name} IN ({names})"
