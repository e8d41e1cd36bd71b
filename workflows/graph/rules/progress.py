"""What the scheduler decides, and the small facts about a task every graph module reads.

`Progress` is what one step of the rules produced: runs to start, gates to open or withdraw,
runs to cancel, and every status change (each one an event on the graph's stream). `note` is
the one way a task's status changes, so no change goes unannounced.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, TypedDict, Unpack

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from contracts import (
        EdgeChanged,
        GraphEdge,
        GraphTask,
        LoopInstance,
        TaskChanged,
        TaskReason,
        TaskStatus,
        TaskVersion,
    )

    from ..state import GraphState

OPEN_TASK = (TaskStatus.PENDING, TaskStatus.WAITING, TaskStatus.READY, TaskStatus.RUNNING)


@dataclass(frozen=True)
class Run:
    """One child workflow to start: a task's current version, or one loop instance of it."""

    task_uuid: str
    version: int
    instance: int | None = None


@dataclass(frozen=True)
class Gate:
    """A `human_interaction` gate to ask: a task's, or one loop instance's (its template's)."""

    task_uuid: str
    instance: int | None = None


@dataclass
class Progress:
    """What the rules decided: runs to start, gates to open, and what changed (for the stream)."""

    runs: list[Run] = field(default_factory=list)
    gates: list[Gate] = field(default_factory=list)
    withdraw: list[str] = field(default_factory=list)
    """Interaction ids of gates that no longer stand (their task was reset, updated or ended)."""
    cancel: list[str] = field(default_factory=list)
    """Child workflow ids to cancel (a loop's instances after one failed, runs a GOTO reset)."""
    changes: list[TaskChanged | EdgeChanged] = field(default_factory=list)


def current(task: GraphTask) -> TaskVersion | None:
    """The task's latest version, if it ever ran."""
    return task.versions[-1] if task.versions else None


def task_by_local(state: GraphState, task_id: str) -> GraphTask | None:
    """The task a blueprint id names."""
    return next((t for t in state.tasks.values() if t.task_id == task_id), None)


def incoming(state: GraphState, task_uuid: str) -> list[GraphEdge]:
    """Edges into a task."""
    return [edge for edge in state.edges if edge.target == task_uuid]


def has_goto(task: GraphTask) -> bool:
    """Whether the task's failure continues somewhere (`on_failure` GOTO)."""
    return bool(task.definition.directives and task.definition.directives.on_failure)


def gate_of(task: GraphTask) -> dict[str, Any] | None:
    """The task's `human_interaction` gate, if any."""
    return task.definition.directives.human_interaction if task.definition.directives else None


def runs_of(task: GraphTask) -> list[str]:
    """Workflow ids of the task's runs in flight (its current version, or its running loop instances)."""
    version = current(task)
    if version is None or version.status != TaskStatus.RUNNING:
        return []
    if version.instances:
        return [i.workflow_id for i in version.instances if i.status == TaskStatus.RUNNING and i.workflow_id]
    return [version.workflow_id] if version.workflow_id else []


class Why(TypedDict, total=False):
    """Why a task changed, where a client acts on it (a gate's decision): the stream's
    `TaskChanged.reason_code` and `by`."""

    reason_code: TaskReason
    by: str


def note(
    task: GraphTask, status: TaskStatus, reason: str | None, progress: Progress, **why: Unpack[Why]
) -> None:
    """Move a task to `status` (with why: in words, and, where a client acts on it, as a code with
    who did it), noting the change for the stream."""
    task.status, task.reason = status, reason
    version = current(task)
    _announce(task, status, reason, progress, why, version=version.version if version else 0)


def note_instance(
    task: GraphTask,
    instance: LoopInstance,
    status: TaskStatus,
    reason: str | None,
    progress: Progress,
    **why: Unpack[Why],
) -> None:
    """Move one loop instance to `status` (with why, as for `note`), noting the change for the stream."""
    instance.status = status
    _announce(task, status, reason, progress, why, instance=instance.index)


def _announce(
    task: GraphTask, status: TaskStatus, reason: str | None, progress: Progress, why: Why, **where: int
) -> None:
    progress.changes.append(
        TaskChanged(
            task_id=task.task_id, task_uuid=task.task_uuid, status=status, reason=reason, **why, **where
        )
    )
