"""Growing a running graph: blueprints from people (`extend`) and plans from its agents.

`accept` resolves the blueprint's new assignees (the `resolve_agents` local activity, through
`resolve_agents`, the one helper that also serves a rollback's `new_assignee_id`), runs every
check of `blueprint.expand` against the graph, adds the new tasks and edges and applies
`update_tasks` through the scheduler (a task waiting at its gate is asked again). An agent's plan
is queued by its report and taken by the run loop; a refused plan is shown, never fatal.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ApplicationError

with workflow.unsafe.imports_passed_through():
    from contracts import (
        AgentLookup,
        AgentLookupResult,
        AgentSpec,
        AuditKind,
        BlueprintChange,
        ErrorType,
        GraphChanged,
        GraphTask,
        PlanRefused,
    )
    from contracts.names import RESOLVE_AGENTS


from ..agent.replies import error_message
from ..supervision.audit import audit
from .blueprint import BlueprintRefused, Expansion, assignees_of, expand
from .cel import Conditions
from .rules.progress import Progress
from .run import GraphRun

RESOLVE_TIMEOUT = timedelta(seconds=10)
RESOLVE_RETRY = RetryPolicy(maximum_attempts=5)

Changed = Callable[[Progress], None]


async def resolve_agents(assignee_ids: list[str], key: str) -> AgentLookupResult:
    """Declarations of `assignee_ids` (the `resolve_agents` local activity); `unknown` says why not."""
    found: AgentLookupResult = await workflow.execute_local_activity(
        RESOLVE_AGENTS,
        AgentLookup(assignee_ids=assignee_ids, key=key),
        result_type=AgentLookupResult,
        start_to_close_timeout=RESOLVE_TIMEOUT,
        retry_policy=RESOLVE_RETRY,
        summary=f"resolve {', '.join(assignee_ids)}",
    )
    return found


def refused(err: BlueprintRefused) -> ApplicationError:
    """A refused blueprint as the error its update answers with (422; 409 for updates of tasks
    that have started)."""
    kind = ErrorType.TASK_STARTED if err.conflict else ErrorType.BLUEPRINT_REFUSED
    return ApplicationError(str(err), type=kind, non_retryable=True)


class Plans:
    """Accept blueprints into one graph; queue and take its agents' plans."""

    def __init__(self, run: GraphRun, changed: Changed) -> None:
        self._config = run.config
        self._state = run.state
        self._scheduler = run.scheduler
        self._chunks = run.chunks
        self._changed = changed
        self._conditions: Conditions = run.scheduler.conditions
        self.queued: list[tuple[GraphTask, BlueprintChange]] = []

    def check(self, change: BlueprintChange) -> None:
        """The validator's part: every check of `expand` (assignees are resolved on acceptance)."""
        try:
            self._expand(change, lambda local: f"check-{local}")
        except BlueprintRefused as err:
            raise refused(err) from err

    async def take(self) -> None:
        """Extend the graph with the plans its agents proposed (a refused plan is shown, not fatal)."""
        while self.queued:
            task, change = self.queued.pop(0)
            try:
                await self.accept(change)
            except Exception as err:  # refused, or its assignees could not be looked up
                why = error_message(err)
                task.reason = f"its plan was refused: {why}"
                audit(
                    self._state.audit,
                    AuditKind.PLAN_REFUSED,
                    change.principal,
                    channel=change.channel,
                    comment=why,
                )
                self._chunks.publish(PlanRefused(task_id=task.task_id, reason=why))

    async def accept(self, change: BlueprintChange) -> dict[str, str]:
        """Add a blueprint to the graph (every check, assignees resolved); blueprint id → UUID."""
        state = self._state
        agents = dict(change.agents)
        missing = [a for a in assignees_of(change.blueprint) if a not in state.agents and a not in agents]
        if missing:
            found = await resolve_agents(missing, self._config.graph_id)
            if found.unknown:
                raise ApplicationError(
                    "; ".join(f"assignee {a!r}: {why}" for a, why in found.unknown.items()),
                    type=ErrorType.BLUEPRINT_REFUSED,
                    non_retryable=True,
                )
            agents.update(found.agents)
        try:
            added = self._expand(change, lambda local: change.task_uuids.get(local) or str(workflow.uuid4()))
        except BlueprintRefused as err:
            raise refused(err) from err
        self._add(added, agents)
        progress = Progress()
        for update in added.updates:
            task = state.tasks[str(update.task_uuid)]
            progress.withdraw += self._scheduler.changes.update(task, update, change.principal, progress)
        self._scheduler.gotos.mark_targets()
        audit(
            state.audit,
            AuditKind.EXTENDED,
            change.principal,
            channel=change.channel,
            comment=f"{len(added.tasks)} tasks, {len(added.edges)} edges, {len(added.updates)} updates",
        )
        self._chunks.publish(
            GraphChanged(change="extended", by=change.principal, tasks=added.ids, edges=len(added.edges))
        )
        self._changed(progress)
        return added.ids

    def _expand(self, change: BlueprintChange, new_id: Callable[[str], str]) -> Expansion:
        return expand(
            change.blueprint,
            tasks=self._state.tasks,
            edges=self._state.edges,
            new_id=new_id,
            next_edge=self._state.next_edge,
            principal=change.principal,
            conditions=self._conditions,
        )

    def _add(self, added: Expansion, agents: dict[str, AgentSpec]) -> None:
        state = self._state
        state.agents.update(agents)
        for task in added.tasks:
            state.tasks[task.task_uuid] = task
            state.order.append(task.task_uuid)
        state.edges += added.edges
        state.next_edge += len(added.edges)
