"""Interventions on one graph task: PAUSE, RESUME and ROLLBACK_AND_MODIFY.

`check` is the validator of the `intervene_checked` update: it refuses, before anything reaches
history, an unknown task (`TaskNotFound`, 404), a version that does not exist (`VersionNotFound`,
422), and what makes no sense now (`TaskAlreadyPaused`, `TaskNotPaused`, `TaskFinished`,
`TaskNeverRan`: 409). The other functions change the state and return the task runs the graph
must signal or cancel. Pure apart from raising; time comes from the caller.
"""

from __future__ import annotations

from datetime import datetime

from temporalio import workflow
from temporalio.exceptions import ApplicationError

with workflow.unsafe.imports_passed_through():
    from contracts import (
        FINISHED_TASK,
        EdgeStatus,
        ErrorType,
        GraphIntervention,
        GraphTask,
        TaskStatus,
    )

    from .state import GraphState

from .scheduler import Scheduler, current


def _refused(message: str, error_type: ErrorType) -> ApplicationError:
    return ApplicationError(message, type=error_type, non_retryable=True)


def check(state: GraphState, request: GraphIntervention) -> GraphTask:
    """The task the intervention is about, or the reason it is refused (a typed ApplicationError)."""
    task = state.tasks.get(str(request.target_task_id))
    if task is None:
        raise _refused(f"no task {request.target_task_id} in this graph", ErrorType.TASK_NOT_FOUND)
    name = f"task {task.task_id!r}"
    kind = request.intervention_type
    if kind == "PAUSE":
        if task.paused:
            raise _refused(f"{name} is already paused", ErrorType.TASK_ALREADY_PAUSED)
        if task.status in FINISHED_TASK:
            raise _refused(f"{name} has {task.status}; there is nothing to pause", ErrorType.TASK_FINISHED)
    elif kind == "RESUME":
        if not task.paused:
            raise _refused(
                f"{name} is not paused ({task.status}); there is nothing to resume", ErrorType.TASK_NOT_PAUSED
            )
    else:
        if not task.versions:
            raise _refused(
                f"{name} never ran ({task.status}); there is nothing to roll back", ErrorType.TASK_NEVER_RAN
            )
        wanted = request.rollback_to_version
        if wanted is not None and not 1 <= wanted <= len(task.versions):
            raise _refused(
                f"{name} has versions 1 to {len(task.versions)}; rollback_to_version {wanted} does not exist",
                ErrorType.VERSION_NOT_FOUND,
            )
    return task


def running_runs(task: GraphTask) -> list[str]:
    """Workflow ids of the task's runs in flight (its current version, or its running loop instances)."""
    version = current(task)
    if version is None or version.status != TaskStatus.RUNNING:
        return []
    if version.instances:
        return [i.workflow_id for i in version.instances if i.status == TaskStatus.RUNNING and i.workflow_id]
    return [version.workflow_id] if version.workflow_id else []


def set_paused(task: GraphTask, paused: bool) -> list[str]:
    """Hold or release the task; the runs to tell (a running task halts at its next safe point)."""
    task.paused = paused
    return running_runs(task)


def rollback(
    scheduler: Scheduler, task: GraphTask, request: GraphIntervention, now: datetime
) -> tuple[list[str], list[str]]:
    """Reset the task and everything downstream; the runs to cancel, and the gates to withdraw.

    The target gets a new version from `rollback_to_version`'s inputs with `new_input_data` laid
    over them (and `new_assignee_id`); every downstream task goes back to pending, to re-run with
    fresh data flow. Every version they had stays, marked superseded. The reset tasks are held
    until the cancelled runs have ended (the caller releases them).
    """
    state = scheduler.state
    affected = [task.task_uuid, *scheduler.descendants(task.task_uuid)]
    cancel: list[str] = []
    gates: list[str] = []
    note = f"rolled back by {request.principal}: {request.comment}"
    for uuid in affected:
        other = state.tasks[uuid]
        cancel += running_runs(other)
        version = current(other)
        if version is not None:
            if version.status == TaskStatus.RUNNING:
                version.status, version.finished_at, version.error = TaskStatus.CANCELLED, now, note
                for instance in version.instances:
                    if instance.status in (TaskStatus.PENDING, TaskStatus.RUNNING):
                        instance.status = TaskStatus.CANCELLED
            version.superseded = True
        if other.gate_interaction:
            gates.append(other.gate_interaction)
            other.gate_interaction = None
        other.status, other.next_input, other.failed_over_to = TaskStatus.PENDING, None, None
        other.reason = None if uuid == task.task_uuid else f"reset: {task.task_id!r} was {note}"
    for edge in state.edges:
        if edge.target in affected:
            edge.status, edge.error = EdgeStatus.WAITING, None
    base = task.versions[(request.rollback_to_version or len(task.versions)) - 1]
    task.next_input = {**base.input_data, **(request.new_input_data or {})}
    task.next_assignee_id = request.new_assignee_id or base.assignee_id
    task.status = TaskStatus.READY
    task.reason = note
    state.holds = sorted({*state.holds, *affected})
    state.cancelling = sorted({*state.cancelling, *cancel})
    return cancel, gates
