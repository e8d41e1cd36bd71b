"""ROLLBACK_AND_MODIFY of a graph task, orchestrated: the scheduler resets, the runs end, the
tasks go.

The scheduler's `rollback` resets the task and everything downstream and holds them; their open
gates are withdrawn and their runs in flight cancelled; once those runs have ended (or
`CANCEL_WAIT` has passed, audited) `release` lets the tasks go, and they re-run through the
scheduler's settling, each through its gate. One rollback is in flight at a time: another is
refused (409, `RollbackInFlight`) by the intervention's check until this one is released.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import timedelta

from temporalio import workflow
from temporalio.exceptions import ApplicationError

with workflow.unsafe.imports_passed_through():
    from contracts import AuditKind, ErrorType, GraphIntervention, GraphTask, TaskRolledBack


from ..supervision.audit import audit
from .children import Children
from .gates import Gates
from .plans import resolve_agents
from .rules.progress import Progress
from .run import GraphRun

CANCEL_WAIT = timedelta(seconds=60)
"""How long a rollback or a cancel waits for cancelled runs to end before going on without them."""


class Rollbacks:
    """Carry out the rollbacks of one graph run."""

    def __init__(
        self,
        run: GraphRun,
        children: Children,
        gates: Gates,
        act: Callable[[Progress], Awaitable[None]],
        step: Callable[[], Awaitable[None]],
    ) -> None:
        self._config = run.config
        self._state = run.state
        self._scheduler = run.scheduler
        self._children = children
        self._gates = gates
        self._chunks = run.chunks
        self._act = act
        self._step = step

    async def resolve_assignee(self, request: GraphIntervention) -> None:
        """Resolve a new assignee before anything changes (`UnknownAgent` when there is none)."""
        wanted = request.new_assignee_id
        if wanted and wanted not in self._state.agents:
            found = await resolve_agents([wanted], self._config.graph_id)
            if found.unknown:
                raise ApplicationError(
                    found.unknown[wanted], type=ErrorType.UNKNOWN_AGENT, non_retryable=True
                )
            self._state.agents.update(found.agents)

    async def roll_back(self, task: GraphTask, request: GraphIntervention) -> None:
        """Reset, cancel, wait, release, re-dispatch (the answer then shows the new version)."""
        done = self._scheduler.changes.rollback(task, request)
        self._gates.withdraw(done.gates, f"task rolled back by {request.principal}")
        self._chunks.publish(
            TaskRolledBack(
                task_id=task.task_id,
                task_uuid=task.task_uuid,
                rolled_back_by=request.principal,
                next_version=len(task.versions) + 1,
                reset=[self._state.tasks[u].task_id for u in done.affected[1:]],
            )
        )
        await self._act(Progress(changes=done.changes))
        await self._children.cancel(done.cancel)
        try:
            await workflow.wait_condition(
                lambda: not any(run in self._state.cancelling for run in done.cancel), timeout=CANCEL_WAIT
            )
        except TimeoutError:
            audit(
                self._state.audit,
                AuditKind.ROLLBACK_WENT_ON,
                "system",
                comment=f"runs did not end within {CANCEL_WAIT}: {done.cancel}",
            )
        self._scheduler.changes.release(done)
        await self._step()
