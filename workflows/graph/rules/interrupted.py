"""A graph whose workflow Temporal ended while it ran: its last good state, to reopen from.

A terminated, timed-out or outside-failed run leaves the state of its last workflow task: tasks
`running` whose runs will never report to it, gates and tool approvals nobody can answer.
`interrupted` turns that into the state a next run starts from, as a failed graph's final state
is: what completed stays completed; every run that was in flight is cancelled (its version kept,
marked superseded, so a late report of it changes nothing) and its task runs again from the inputs
it had; a task waiting at its gate, or whose run was interrupted, goes back to pending and asks
again on its next run (a gate asks on every run); its open requests are withdrawn, each recorded
as decided by `system:ended` (a later decision on one is told it was). Pure: the API applies it
to a closed run's state before it reopens the graph; nothing here is a workflow command.
"""

from __future__ import annotations

from datetime import datetime

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from contracts import AuditKind, GraphTask, InteractionOutcome, Principal, TaskStatus

    from ..state import GraphState

from ...supervision.audit import audit
from .progress import OPEN_TASK, current, runs_of

INTERRUPTED = (TaskStatus.RUNNING, TaskStatus.WAITING)
"""Tasks a run ended from outside leaves half-done: they run (and ask) again when it is reopened."""


def interrupted(state: GraphState, status: str, reason: str, at: datetime) -> list[str]:
    """Make `state` (a run Temporal ended while it ran) the last good state, ended `status`
    (`terminated`, `timed_out`, `failed`) with `reason`, how in words (see the module docstring);
    the workflow ids of the runs that were in flight, which may still be going (a graph's runs
    outlive it) and are to be cancelled."""
    why = f"interrupted: {reason}"
    in_flight: list[str] = []
    withdrawn: list[str] = []
    for task in state.tasks.values():
        in_flight += runs_of(task)
        withdrawn += _gates_of(task)
        if task.status in INTERRUPTED:
            _run_again(task, why, at)
    withdrawn += [request.interaction_id for request in state.pending]
    withdrawn += [r.interaction_id for told in state.task_pending.values() for r in told.pending]
    for interaction_id in dict.fromkeys(withdrawn):
        state.decided[interaction_id] = InteractionOutcome(
            interaction_id=interaction_id,
            approved=False,
            decided_by=Principal.ENDED,
            channel="system",
            decided_at=at,
            comment=why,
        )
        audit(
            state.audit, AuditKind.DENIED, Principal.ENDED, interaction_id=interaction_id, comment=why, at=at
        )
    state.pending, state.task_pending = [], {}
    state.holds, state.cancelling, state.rolling_back = [], [], None
    state.status, state.reason, state.finished_at = status, reason, at
    return in_flight


def _gates_of(task: GraphTask) -> list[str]:
    """The task's open gates (its own, its loop instances'), cleared."""
    gates = [task.gate_interaction] if task.gate_interaction else []
    task.gate_interaction = None
    version = current(task)
    for instance in version.instances if version is not None else []:
        if instance.gate_interaction:
            gates.append(instance.gate_interaction)
            instance.gate_interaction = None
    return gates


def _run_again(task: GraphTask, why: str, at: datetime) -> None:
    """Back to pending, summoned (its edges cannot skip it), with the inputs its run had."""
    version = current(task)
    if version is not None and version.status in OPEN_TASK:
        version.status, version.finished_at, version.error = TaskStatus.CANCELLED, at, why
        version.superseded = True
        for instance in version.instances:
            if instance.status in OPEN_TASK:
                instance.status, instance.error = TaskStatus.CANCELLED, why
        task.next_input, task.next_assignee_id = dict(version.input_data), version.assignee_id
        task.input_override = None
    task.status, task.reason, task.summoned = TaskStatus.PENDING, why, True
