"""How a task's run ends: a run's report applied, a task completed, a task failed.

`record` applies what a run reports (stale reports, of a version a rollback or a GOTO superseded,
are dropped). `fail` is the one way a task fails, whatever failed it (its run, an edge's CEL error,
its data flow, a denied gate, a loop instance): its `on_failure` GOTO is followed (`gotos`).
`cancel_open` ends what has not finished when the whole graph is cancelled.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any, Unpack

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from contracts import ArtifactRef, GraphTask, TaskReport, TaskStatus

    from ..state import GraphState

from .gotos import Gotos
from .progress import OPEN_TASK, Progress, Why, current, note, note_instance


class Outcomes:
    """The ends of one graph's runs."""

    def __init__(self, state: GraphState, now: Callable[[], datetime], gotos: Gotos) -> None:
        self.state = state
        self.now = now
        self.gotos = gotos

    def record(self, report: TaskReport, progress: Progress) -> GraphTask | None:
        """Apply a run's report; the task when it changed (None: a stale or unknown report)."""
        task = self.state.tasks.get(report.task_uuid)
        version = current(task) if task else None
        if task is None or version is None or version.version != report.version or version.superseded:
            return None
        if report.instance is not None:
            instance = next((i for i in version.instances if i.index == report.instance), None)
            if instance is None or instance.status != TaskStatus.RUNNING:
                return None
            instance.output, instance.artifact, instance.error = report.output, report.artifact, report.error
            note_instance(task, instance, TaskStatus(report.status), report.error, progress)
            return task
        if task.status != TaskStatus.RUNNING:
            return None
        if report.status == "completed":
            self.complete(task, report.output, report.artifact, progress)
        elif report.status == "failed":
            self.fail(task, report.error or "the task failed", progress)
        else:
            version.status, version.finished_at, version.error = (
                TaskStatus.CANCELLED,
                self.now(),
                report.error,
            )
            note(task, TaskStatus.CANCELLED, report.error or "cancelled", progress)
        return task

    def complete(
        self, task: GraphTask, output: Any, artifact: ArtifactRef | None, progress: Progress
    ) -> None:
        """The task's current version completed with `output` (`artifact`: the whole of it, offloaded)."""
        version = current(task)
        assert version is not None
        version.status, version.output, version.finished_at = TaskStatus.COMPLETED, output, self.now()
        version.artifact = artifact
        note(task, TaskStatus.COMPLETED, None, progress)

    def fail(self, task: GraphTask, error: str, progress: Progress, **why: Unpack[Why]) -> None:
        """Fail the task; follow its `on_failure` GOTO when it has one (within `max_attempts`)."""
        version = current(task)
        if version is not None and version.status in (TaskStatus.RUNNING, TaskStatus.PENDING):
            version.status, version.error, version.finished_at = TaskStatus.FAILED, error, self.now()
        note(task, TaskStatus.FAILED, error, progress, **why)
        self.gotos.follow(task, error, progress)

    def cancel_open(self, reason: str | None, progress: Progress) -> None:
        """The graph was cancelled: every task (and loop instance) that has not finished is cancelled."""
        for uuid in self.state.order:
            task = self.state.tasks[uuid]
            if task.status in (TaskStatus.COMPLETED, TaskStatus.FAILED, TaskStatus.SKIPPED):
                continue
            version = current(task)
            for instance in version.instances if version is not None else []:
                if instance.status in OPEN_TASK:
                    note_instance(task, instance, TaskStatus.CANCELLED, reason, progress)
            note(task, TaskStatus.CANCELLED, reason, progress)
