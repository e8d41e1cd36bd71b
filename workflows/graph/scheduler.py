"""The graph's rules, applied to its state: which edges hold, which tasks run, skip or fail.

`Scheduler.advance` resolves every edge whose source has finished (CEL over its output; an error
stays on the edge and fails the target, never a silent false), moves each pending task whose
edges are all resolved to ready (its input built by data flow), waiting (a gate), skipped (no
edge taken) or failed, and picks the runs to start within the running-task cap: a task's next
version, or a loop's instances (all at once, or one after another). `record` applies what a
run reports. A failure follows the task's `on_failure` GOTO when it has one.

Pure and deterministic: state in, state out, no commands; time comes from the `now` it is given.
The workflow turns `Progress` into child starts, gates and chunks.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from contracts import (
        FINISHED_TASK,
        EdgeStatus,
        GraphEdge,
        GraphTask,
        LoopInstance,
        TaskReport,
        TaskStatus,
        TaskVersion,
    )

    from .state import GraphState

from .cel import ConditionError, Conditions
from .paths import PathError, value_at

OPEN_TASK = (TaskStatus.PENDING, TaskStatus.WAITING, TaskStatus.READY, TaskStatus.RUNNING)


@dataclass(frozen=True)
class Run:
    """One child workflow to start: a task's current version, or one loop instance of it."""

    task_uuid: str
    version: int
    instance: int | None = None


@dataclass
class Progress:
    """What `advance` decided: runs to start, gates to open, and what changed (for the stream)."""

    runs: list[Run] = field(default_factory=list)
    gates: list[str] = field(default_factory=list)
    cancel: list[str] = field(default_factory=list)
    """Child workflow ids to cancel (a loop's running instances after one failed)."""
    changes: list[dict[str, Any]] = field(default_factory=list)


def current(task: GraphTask) -> TaskVersion | None:
    """The task's latest version, if it ever ran."""
    return task.versions[-1] if task.versions else None


def has_goto(task: GraphTask) -> bool:
    """Whether the task's failure continues somewhere (`on_failure` GOTO)."""
    return bool(task.definition.directives and task.definition.directives.on_failure)


def gate_of(task: GraphTask) -> dict[str, Any] | None:
    """The task's `human_interaction` gate, if any."""
    return task.definition.directives.human_interaction if task.definition.directives else None


class Scheduler:
    """The rules of one graph, on its state."""

    def __init__(
        self,
        state: GraphState,
        conditions: Conditions,
        now: Callable[[], datetime],
        *,
        max_running: int,
    ) -> None:
        self.state = state
        self.conditions = conditions
        self.now = now
        self.max_running = max_running

    # ------------------------------------------------------------ queries

    def task_by_local(self, task_id: str) -> GraphTask | None:
        """The task a blueprint id names."""
        return next((t for t in self.state.tasks.values() if t.task_id == task_id), None)

    def incoming(self, task_uuid: str) -> list[GraphEdge]:
        """Edges into a task."""
        return [edge for edge in self.state.edges if edge.target == task_uuid]

    def running_runs(self) -> int:
        """Child workflows in flight (task versions and loop instances)."""
        count = 0
        for task in self.state.tasks.values():
            version = current(task)
            if task.status != TaskStatus.RUNNING or version is None:
                continue
            if version.instances:
                count += sum(i.status == TaskStatus.RUNNING for i in version.instances)
            else:
                count += 1
        return count

    def finished(self) -> bool:
        """Nothing left to run, wait for or resolve."""
        if self.state.holds:
            return False
        return all(
            t.status not in OPEN_TASK or (t.goto_only and not t.versions) for t in self.state.tasks.values()
        )

    def descendants(self, task_uuid: str) -> list[str]:
        """Every task downstream of `task_uuid` (by edges), in the order tasks were added."""
        children: dict[str, list[str]] = {}
        for edge in self.state.edges:
            children.setdefault(edge.source, []).append(edge.target)
        found: set[str] = set()
        stack = list(children.get(task_uuid, []))
        while stack:
            node = stack.pop()
            if node not in found:
                found.add(node)
                stack.extend(children.get(node, []))
        return [uuid for uuid in self.state.order if uuid in found]

    # ------------------------------------------------------------ advancing

    def advance(self) -> Progress:
        """Apply the rules until nothing changes; the runs and gates to start now."""
        progress = Progress()
        changed = True
        while changed:
            changed = self._resolve_edges(progress)
            changed = self._settle_pending(progress) or changed
            changed = self._settle_loops(progress) or changed
        if not (self.state.paused or self.state.cancelled):
            self._pick_runs(progress)
        return progress

    def _resolve_edges(self, progress: Progress) -> bool:
        changed = False
        for edge in self.state.edges:
            if edge.status != EdgeStatus.WAITING or edge.target in self.state.holds:
                continue
            source = self.state.tasks[edge.source]
            if source.status not in FINISHED_TASK or source.task_uuid in self.state.holds:
                continue
            edge.status, edge.error = self._edge_outcome(edge, source)
            changed = True
            progress.changes.append({"edge": edge.edge_id, "status": edge.status, "error": edge.error})
        return changed

    def _edge_outcome(self, edge: GraphEdge, source: GraphTask) -> tuple[EdgeStatus, str | None]:
        if source.status != TaskStatus.COMPLETED:
            return EdgeStatus.NOT_TAKEN, None
        if edge.condition is None:
            return EdgeStatus.TAKEN, None
        version = current(source)
        facts = {
            "task_id": source.task_id,
            "status": source.status.upper(),
            "version": version.version if version else 0,
        }
        try:
            held = self.conditions.holds(
                edge.condition.expression, version.output if version else None, facts
            )
        except ConditionError as err:
            return EdgeStatus.ERROR, str(err)
        return (EdgeStatus.TAKEN if held else EdgeStatus.NOT_TAKEN), None

    def _settle_pending(self, progress: Progress) -> bool:
        changed = False
        for uuid in self.state.order:
            task = self.state.tasks[uuid]
            if task.status != TaskStatus.PENDING or task.goto_only or uuid in self.state.holds:
                continue
            incoming = self.incoming(uuid)
            if any(edge.status == EdgeStatus.WAITING for edge in incoming):
                continue
            changed = True
            errors = [edge for edge in incoming if edge.status == EdgeStatus.ERROR]
            taken = [edge for edge in incoming if edge.status == EdgeStatus.TAKEN]
            if errors:
                edge = errors[0]
                self.fail(task, f"edge {edge.source_task_id} → {edge.target_task_id}: {edge.error}", progress)
            elif incoming and not taken:
                names = ", ".join(f"{edge.source_task_id} → {edge.target_task_id}" for edge in incoming)
                self.set_status(task, TaskStatus.SKIPPED, f"no incoming edge was taken ({names})", progress)
            else:
                try:
                    task.next_input = self._input(task, taken)
                except PathError as err:
                    self.fail(task, f"data flow into {task.task_id!r}: {err}", progress)
                    continue
                if gate_of(task) is not None:
                    self.set_status(task, TaskStatus.WAITING, "waiting for a person's confirmation", progress)
                    progress.gates.append(uuid)
                else:
                    self.set_status(task, TaskStatus.READY, None, progress)
        return changed

    def _input(self, task: GraphTask, taken: list[GraphEdge]) -> dict[str, Any]:
        data = dict(task.next_input if task.next_input is not None else task.definition.input_data)
        for edge in taken:
            if edge.data_flow is None:
                continue
            source = current(self.state.tasks[edge.source])
            for key, path in edge.data_flow.mappings.items():
                data[key] = value_at(source.output if source else None, path)
        return data

    # ------------------------------------------------------------ loops

    def _settle_loops(self, progress: Progress) -> bool:
        changed = False
        for uuid in self.state.order:
            task = self.state.tasks[uuid]
            version = current(task)
            if task.status != TaskStatus.RUNNING or version is None or not version.instances:
                continue
            statuses = [instance.status for instance in version.instances]
            failed = next((i for i in version.instances if i.status == TaskStatus.FAILED), None)
            if failed is not None:
                progress.cancel += [
                    i.workflow_id
                    for i in version.instances
                    if i.status == TaskStatus.RUNNING and i.workflow_id
                ]
                for instance in version.instances:
                    if instance.status in (TaskStatus.PENDING, TaskStatus.RUNNING):
                        instance.status = TaskStatus.CANCELLED
                self.fail(task, f"loop instance {failed.index} failed: {failed.error}", progress)
                changed = True
            elif all(status == TaskStatus.COMPLETED for status in statuses):
                self._complete(task, [i.output for i in version.instances], None, progress)
                changed = True
        return changed

    def _loop_items(self, task: GraphTask) -> list[Any]:
        loop = task.definition.directives.loop_directive if task.definition.directives else None
        assert loop is not None
        source = self.task_by_local(loop.input_source_task_id)
        version = current(source) if source is not None else None
        output = version.output if version is not None else None
        items = output if isinstance(output, list) else None
        if items is None and isinstance(output, dict):
            found = output.get(loop.iteration_input_key)
            items = found if isinstance(found, list) else None
        if items is None:
            raise PathError(
                f"loop over {loop.input_source_task_id!r}: its output is not a list and has no list "
                f"under {loop.iteration_input_key!r}"
            )
        return items[: loop.max_iterations] if loop.max_iterations else items

    # ------------------------------------------------------------ starting

    def _pick_runs(self, progress: Progress) -> None:
        room = self.max_running - self.running_runs()
        for uuid in self.state.order:
            if room <= 0:
                return
            task = self.state.tasks[uuid]
            if task.paused or uuid in self.state.holds:
                continue
            if task.status == TaskStatus.READY:
                room -= self._start(task, room, progress)
                continue
            version = current(task)
            if task.status == TaskStatus.RUNNING and version is not None and version.instances:
                room -= self._start_instances(task, version, room, progress)

    def _start(self, task: GraphTask, room: int, progress: Progress) -> int:
        """Start a ready task's next version (a loop: its first instances); the runs started."""
        version = self._new_version(task)
        self.set_status(task, TaskStatus.RUNNING, None, progress)
        loop = task.definition.directives.loop_directive if task.definition.directives else None
        if loop is None:
            progress.runs.append(Run(task.task_uuid, version.version))
            return 1
        try:
            items = self._loop_items(task)
        except PathError as err:
            self.fail(task, str(err), progress)
            return 0
        if not items:
            self._complete(task, [], None, progress)
            return 0
        version.instances = [LoopInstance(index=i, item=item) for i, item in enumerate(items)]
        return self._start_instances(task, version, room, progress)

    def _start_instances(self, task: GraphTask, version: TaskVersion, room: int, progress: Progress) -> int:
        loop = task.definition.directives.loop_directive if task.definition.directives else None
        serial = loop is not None and loop.type == "SERIAL_ITERATION"
        if serial and any(i.status == TaskStatus.RUNNING for i in version.instances):
            return 0
        started = 0
        for instance in version.instances:
            if started >= room or (serial and started):
                break
            if instance.status == TaskStatus.PENDING:
                instance.status = TaskStatus.RUNNING
                progress.runs.append(Run(task.task_uuid, version.version, instance.index))
                progress.changes.append(
                    {
                        "task_id": task.task_id,
                        "task_uuid": task.task_uuid,
                        "instance": instance.index,
                        "status": "running",
                    }
                )
                started += 1
        return started

    def _new_version(self, task: GraphTask) -> TaskVersion:
        version = TaskVersion(
            version=len(task.versions) + 1,
            input_data=task.next_input if task.next_input is not None else dict(task.definition.input_data),
            assignee_id=task.next_assignee_id or task.definition.assignee_id,
            status=TaskStatus.RUNNING,
            started_at=self.now(),
        )
        task.versions.append(version)
        task.next_input = None
        task.status = TaskStatus.RUNNING
        task.reason = None
        return version

    # ------------------------------------------------------------ outcomes

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
            instance.status = TaskStatus(report.status)
            instance.output, instance.error = report.output, report.error
            return task
        if task.status != TaskStatus.RUNNING:
            return None
        if report.status == "completed":
            self._complete(task, report.output, report, progress)
        elif report.status == "failed":
            self.fail(task, report.error or "the task failed", progress)
        else:
            self.set_status(task, TaskStatus.CANCELLED, report.error or "cancelled", progress)
            version.status, version.finished_at, version.error = (
                TaskStatus.CANCELLED,
                self.now(),
                report.error,
            )
        return task

    def _complete(self, task: GraphTask, output: Any, report: TaskReport | None, progress: Progress) -> None:
        version = current(task)
        assert version is not None
        version.status, version.output, version.finished_at = TaskStatus.COMPLETED, output, self.now()
        version.artifact = report.artifact if report else None
        self.set_status(task, TaskStatus.COMPLETED, None, progress)

    def fail(self, task: GraphTask, error: str, progress: Progress) -> None:
        """Fail the task; follow its `on_failure` GOTO when it has one."""
        version = current(task)
        if version is not None and version.status in (TaskStatus.RUNNING, TaskStatus.PENDING):
            version.status, version.error, version.finished_at = TaskStatus.FAILED, error, self.now()
        self.set_status(task, TaskStatus.FAILED, error, progress)
        self.follow_failure(task, error, progress)

    def follow_failure(self, task: GraphTask, error: str, progress: Progress) -> bool:
        """Start the task's GOTO target with the failure in its input; False when it has none."""
        failure = task.definition.directives.on_failure if task.definition.directives else None
        target = self.task_by_local(str(failure.get("target_task_id"))) if failure else None
        if target is None:
            return False
        if target.status != TaskStatus.PENDING or target.versions:
            task.reason = f"{error}; on_failure GOTO {target.task_id!r} not taken: it is {target.status}"
            return False
        target.next_input = {
            **target.definition.input_data,
            "failure": {"task_id": task.task_id, "task_uuid": task.task_uuid, "error": error},
        }
        target.goto_only = False
        task.failed_over_to = target.task_uuid
        task.reason = f"{error}; continued at {target.task_id!r} (on_failure GOTO)"
        self.set_status(target, TaskStatus.READY, f"on_failure of {task.task_id!r}", progress)
        return True

    def skip(self, task: GraphTask, reason: str, progress: Progress) -> None:
        """Mark a task that will not run (its edges then count as not taken)."""
        self.set_status(task, TaskStatus.SKIPPED, reason, progress)

    def set_status(self, task: GraphTask, status: TaskStatus, reason: str | None, progress: Progress) -> None:
        """Move a task to `status` (with why), noting the change for the stream."""
        task.status, task.reason = status, reason
        version = current(task)
        progress.changes.append(
            {
                "task_id": task.task_id,
                "task_uuid": task.task_uuid,
                "status": status,
                "version": version.version if version else 0,
                "reason": reason,
            }
        )

    def failed_unhandled(self) -> list[GraphTask]:
        """Failed tasks whose failure no GOTO took up."""
        return [
            task
            for task in self.state.tasks.values()
            if task.status == TaskStatus.FAILED and task.failed_over_to is None
        ]

    def mark_goto_targets(self) -> None:
        """A GOTO target nothing leads to by an edge waits for a failure instead of starting."""
        targets = {
            str(task.definition.directives.on_failure.get("target_task_id"))
            for task in self.state.tasks.values()
            if task.definition.directives and task.definition.directives.on_failure
        }
        fed = {edge.target for edge in self.state.edges}
        for task in self.state.tasks.values():
            if task.status == TaskStatus.PENDING and not task.versions:
                task.goto_only = task.task_id in targets and task.task_uuid not in fed
