"""People's changes to tasks: ROLLBACK_AND_MODIFY and a plan's `update_tasks`.

A rollback resets the task and everything downstream (`resets`) and holds them (`holds` and
`rolling_back` are the rollback's alone; it adds the runs it cancels to `cancelling`, the runs
whose end is awaited, which each run's report and `release` take off) until `release`, once the
runs it cancelled have ended: nothing it reset starts meanwhile, and a second rollback is refused. The task then
starts from `rollback_to_version`'s inputs, `new_input_data` over them, through settling and its
gate like any run. An update changes a task that has not started; one waiting at its gate, or
confirmed, is asked again with its new input.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from contracts import GraphIntervention, GraphTask, TaskStatus, TaskUpdate

    from ..state import GraphState

from ..blueprint import UPDATABLE_STATUS
from .progress import Progress, note
from .resets import Reset, reset


class Changes:
    """Rollbacks and updates of one graph's tasks."""

    def __init__(self, state: GraphState, now: Callable[[], datetime]) -> None:
        self.state = state
        self.now = now

    def rollback(self, task: GraphTask, request: GraphIntervention) -> Reset:
        """Reset the task and everything downstream, held until `release`; what to cancel and
        withdraw, and the status changes."""
        state = self.state
        progress = Progress()
        note_text = f"rolled back by {request.principal}: {request.comment}"
        done = reset(state, task, note_text, self.now(), progress)
        base = task.versions[(request.rollback_to_version or len(task.versions)) - 1]
        task.next_input = dict(base.input_data)
        task.input_override = dict(request.new_input_data) if request.new_input_data else None
        task.next_assignee_id = request.new_assignee_id or base.assignee_id
        for uuid in done.affected:
            state.tasks[uuid].goto_attempts = 0  # a person starts the retries over
        state.holds = sorted({*state.holds, *done.affected})
        state.cancelling = sorted({*state.cancelling, *done.cancel})
        state.rolling_back = f"task {task.task_id!r} by {request.principal}"
        done.changes = progress.changes
        return done

    def release(self, done: Reset) -> None:
        """The rollback's cancelled runs ended (or were waited for long enough): let its tasks go."""
        state = self.state
        state.holds = [uuid for uuid in state.holds if uuid not in done.affected]
        state.cancelling = [run for run in state.cancelling if run not in done.cancel]
        state.rolling_back = None

    def update(self, task: GraphTask, update: TaskUpdate, principal: str, progress: Progress) -> list[str]:
        """A plan's `update_tasks` on a task that has not started; the gates to withdraw."""
        withdraw = [task.gate_interaction] if task.gate_interaction else []
        task.gate_interaction = None
        if update.new_input_data is not None:
            task.definition = task.definition.model_copy(update={"input_data": update.new_input_data})
            failure = (task.next_input or {}).get("failure")
            task.next_input = {**update.new_input_data, "failure": failure} if failure else None
            if task.status in (TaskStatus.READY, TaskStatus.WAITING):
                note(task, TaskStatus.PENDING, f"input updated by {principal}'s plan", progress)
        if update.new_status is not None:
            status = UPDATABLE_STATUS[update.new_status.lower()]
            note(task, status, f"{status} by {principal}'s plan", progress)
        return withdraw
