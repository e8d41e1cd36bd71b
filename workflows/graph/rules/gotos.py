"""`on_failure` GOTO: where a failure continues, and the handlers no failure reaches.

A task's GOTO names where its failure continues. `follow` resets that target and everything
downstream of it (`resets`: it re-runs as a new version, through its gate, with
`input_data.failure`), at most `max_attempts` times (default `GOTO_ATTEMPTS`); past that the
failure stands and names the target. A target that nothing leads to by an edge, and that is
upstream of no task whose GOTO names it, is a handler (`goto_only`): it waits for a failure, and
is skipped once none can come, so what waits for it resolves instead of hanging.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from contracts import FINISHED_TASK, GraphTask, TaskStatus

    from ..state import GraphState

from .progress import Progress, note, task_by_local
from .resets import downstream, reset

GOTO_ATTEMPTS = 3
"""How many times an `on_failure` GOTO is followed when it does not say (`max_attempts`)."""
NO_FAILURE = "no failure led here (on_failure GOTO target)"


class Gotos:
    """The GOTOs of one graph."""

    def __init__(self, state: GraphState, now: Callable[[], datetime]) -> None:
        self.state = state
        self.now = now

    def follow(self, task: GraphTask, error: str, progress: Progress) -> None:
        """Re-run the failed task's GOTO target (a new version, `input_data.failure` set) and
        everything downstream of it; past `max_attempts` the failure stands and names the target."""
        failure = task.definition.directives.on_failure if task.definition.directives else None
        target = task_by_local(self.state, str(failure.get("target_task_id"))) if failure else None
        if failure is None or target is None:
            return
        limit = int(failure.get("max_attempts", GOTO_ATTEMPTS))
        if task.goto_attempts >= limit:
            task.reason = f"{error}; on_failure GOTO {target.task_id!r} given up after {limit} attempts"
            return
        task.goto_attempts += 1
        why = f"on_failure GOTO of {task.task_id!r} (attempt {task.goto_attempts} of {limit})"
        done = reset(self.state, target, why, self.now(), progress)
        progress.cancel += done.cancel
        progress.withdraw += done.gates
        target.next_input = {
            **target.definition.input_data,
            "failure": {
                "task_id": task.task_id,
                "task_uuid": task.task_uuid,
                "error": error,
                "attempt": task.goto_attempts,
            },
        }
        if task.task_uuid not in done.affected:
            task.failed_over_to = target.task_uuid
            task.reason = f"{error}; continued at {target.task_id!r} (on_failure GOTO)"

    def mark_targets(self) -> None:
        """A GOTO target that nothing leads to by an edge, and that is upstream of no task whose
        GOTO names it (a handler, not a "retry from here"), waits for a failure."""
        state = self.state
        targets: set[str] = set()
        retries: set[str] = set()
        for task in state.tasks.values():
            failure = task.definition.directives.on_failure if task.definition.directives else None
            target = task_by_local(state, str(failure.get("target_task_id"))) if failure else None
            if target is not None:
                targets.add(target.task_uuid)
                if task.task_uuid in downstream(state, target.task_uuid):
                    retries.add(target.task_uuid)
        fed = {edge.target for edge in state.edges}
        for task in state.tasks.values():
            if task.status == TaskStatus.PENDING and not task.versions:
                uuid = task.task_uuid
                task.goto_only = uuid in targets and uuid not in retries and uuid not in fed

    def skip_unneeded(self, task: GraphTask, progress: Progress) -> bool:
        """A handler is skipped once every task whose GOTO names it has ended without failing over
        to it (what depends on it can then resolve, instead of waiting forever)."""
        naming = [
            other
            for other in self.state.tasks.values()
            if other.definition.directives
            and other.definition.directives.on_failure
            and other.definition.directives.on_failure.get("target_task_id") == task.task_id
        ]
        if any(other.status not in FINISHED_TASK for other in naming):
            return False
        note(task, TaskStatus.SKIPPED, NO_FAILURE, progress)
        return True

    def skip_left(self, progress: Progress) -> bool:
        """Nothing runs, asks or waits to start: no failure can come any more, so the handlers
        still pending are skipped (what waits for them then resolves, never hangs)."""
        tasks = self.state.tasks.values()
        if self.state.holds or any(
            t.status in (TaskStatus.RUNNING, TaskStatus.WAITING, TaskStatus.READY) for t in tasks
        ):
            return False
        left = [t for t in tasks if t.status == TaskStatus.PENDING and t.goto_only and not t.summoned]
        for task in left:
            note(task, TaskStatus.SKIPPED, NO_FAILURE, progress)
        return bool(left)

    def close(self, progress: Progress) -> None:
        """The graph ends: handlers no failure led to are skipped."""
        for task in self.state.tasks.values():
            if task.goto_only and task.status == TaskStatus.PENDING:
                note(task, TaskStatus.SKIPPED, NO_FAILURE, progress)
