"""Interventions on one graph task: PAUSE, RESUME and ROLLBACK_AND_MODIFY, checked and applied.

`check_fields` and `check` are the validator of the `intervene_checked` update (and the guard of its
signal twin and of a reopening): they refuse fields a PAUSE or RESUME would ignore
(`InvalidIntervention`, 422), before anything reaches history, an unknown task (`TaskNotFound`,
404), a version that does not exist (`VersionNotFound`, 422), and what makes no sense now
(`TaskAlreadyPaused`, `TaskNotPaused`, `TaskFinished`, `TaskNeverRan`, `RollbackInFlight`: 409).
The API runs it too, against a closed graph's final state, before reopening it.
`TaskInterventions.apply` audits what passes and carries it out: a pause or resume is a flag the
scheduler and the task's run read; a rollback is `Rollbacks`' (new assignee resolved first).
`InterventionHandlers` are the update and its signal twin that `TaskGraphWorkflow` inherits.
"""

from __future__ import annotations

from temporalio import workflow
from temporalio.exceptions import ApplicationError

with workflow.unsafe.imports_passed_through():
    from contracts import (
        FINISHED_TASK,
        AuditKind,
        ErrorType,
        GraphConfig,
        GraphIntervention,
        GraphQuery,
        GraphTask,
        GraphView,
        TaskPaused,
    )

    from .state import GraphState

from ..agent.replies import error_message
from ..supervision.audit import audit
from ..supervision.interventions import Interventions
from . import view
from .failsafe import answered_as_failure
from .rollbacks import Rollbacks
from .run import GraphRun


def _refused(message: str, error_type: ErrorType) -> ApplicationError:
    return ApplicationError(message, type=error_type, non_retryable=True)


ROLLBACK_FIELDS = ("rollback_to_version", "new_input_data", "new_assignee_id")


def check_fields(request: GraphIntervention) -> None:
    """Refuse fields a PAUSE or RESUME would ignore (`InvalidIntervention`, 422)."""
    if request.intervention_type == "ROLLBACK_AND_MODIFY":
        return
    given = [name for name in ROLLBACK_FIELDS if getattr(request, name) is not None]
    if given:
        raise _refused(
            f"{request.intervention_type} takes no {', '.join(given)}: they go with ROLLBACK_AND_MODIFY "
            "(pause the task, then roll it back with its new input)",
            ErrorType.INVALID_INTERVENTION,
        )


def check(state: GraphState, request: GraphIntervention) -> GraphTask:
    """The task the intervention is about, or the reason it is refused (a typed ApplicationError)."""
    task = state.tasks.get(str(request.target_task_uuid))
    if task is None:
        raise _refused(f"no task {request.target_task_uuid} in this graph", ErrorType.TASK_NOT_FOUND)
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
        if state.rolling_back:
            raise _refused(
                f"the rollback of {state.rolling_back} is still in flight (its cancelled runs have not "
                "ended); try again once it has",
                ErrorType.ROLLBACK_IN_FLIGHT,
            )
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


class TaskInterventions:
    """Apply the interventions on one graph run's tasks."""

    def __init__(self, run: GraphRun, rollbacks: Rollbacks) -> None:
        self._state = run.state
        self._rollbacks = rollbacks
        self._chunks = run.chunks

    async def apply(self, request: GraphIntervention) -> None:
        """Carry out a checked intervention (a refusal found now is raised, typed, before any change)."""
        task = check(self._state, request)
        kind = request.intervention_type
        if kind == "ROLLBACK_AND_MODIFY":
            await self._rollbacks.resolve_assignee(request)
            task = check(self._state, request)  # still true after the await
        audit(
            self._state.audit,
            AuditKind(kind.lower()),
            request.principal,
            channel=request.channel,
            comment=f"task {task.task_id!r}: {request.comment}",
        )
        if kind == "ROLLBACK_AND_MODIFY":
            await self._rollbacks.roll_back(task, request)
            return
        task.paused = kind == "PAUSE"
        self._chunks.publish(
            TaskPaused(
                task_id=task.task_id, task_uuid=task.task_uuid, paused=task.paused, by=request.principal
            )
        )


class InterventionHandlers:
    """`intervene_checked` and its signal twin `intervene`; `TaskGraphWorkflow` inherits them and
    sets `_config`, `_state`, `_interventions` (its supervisor's), `_tasks` and `_dirty` in init."""

    _config: GraphConfig
    _state: GraphState
    _interventions: Interventions
    _tasks: TaskInterventions
    _dirty: bool

    @workflow.update
    async def intervene_checked(self, request: GraphIntervention) -> GraphView:
        """PAUSE, RESUME or ROLLBACK_AND_MODIFY one task; answers once it is done (see validator)."""
        with answered_as_failure(f"the {request.intervention_type}"):
            await self._intervene(request)
        return view.graph_view(workflow.info().workflow_id, self._config, self._state, GraphQuery())

    @intervene_checked.validator
    def _validate_intervene(self, request: GraphIntervention) -> None:
        self._interventions.check_open()
        check_fields(request)
        check(self._state, request)

    @workflow.signal
    async def intervene(self, request: GraphIntervention) -> None:
        """Signal twin of `intervene_checked`: a refused intervention is audited, not raised."""
        try:
            self._interventions.check_open()
            if request.intervention_type != "ROLLBACK_AND_MODIFY":
                check_fields(request)
            check(self._state, request)
            await self._intervene(request)
        except Exception as err:  # refused, or it failed (an activity it needed): audited, never fatal
            audit(
                self._state.audit,
                AuditKind.REJECTED,
                request.principal,
                channel=request.channel,
                comment=f"{request.intervention_type}: {error_message(err)}",
            )

    async def _intervene(self, request: GraphIntervention) -> None:
        await self._tasks.apply(request)
        self._dirty = True
