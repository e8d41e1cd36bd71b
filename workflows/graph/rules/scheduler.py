"""The graph's rules, applied to its state: the one owner of every task's status.

`Scheduler.advance` applies the rules until nothing changes: it resolves edges and settles pending
tasks (`settling`, the one way to READY, a gate on every run), ends loops whose instances ended
(`loops`), skips GOTO handlers no failure can reach any more (`gotos`), and picks the runs to start
within the running-task cap (`priority: HIGHEST` first). The rest of the rules are its parts,
each a plain class over the same state: `outcomes` (a run's report; completing and failing, a
failure following its GOTO), `decisions` (a gate's decision, the other way to READY), `changes`
(rollback with its release, a plan's `update_tasks`), `gotos` and `outputs` (whole outputs).

Pure and deterministic: state in, state out, no commands; time comes from the `now` it is given.
The workflow turns `Progress` into child starts, gates and chunks.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from contracts import GraphEdge, GraphTask, LoopInstance, TaskReport, TaskStatus, TaskVersion

    from ..state import GraphState

from ..cel import Conditions
from ..paths import PathError
from .changes import Changes
from .decisions import Decisions
from .gotos import Gotos
from .loops import loop_items, loop_of, settle_loops, step_instances
from .outcomes import Outcomes
from .outputs import Outputs
from .progress import OPEN_TASK, Progress, Run, current, incoming, note, runs_of, task_by_local
from .settling import Settling


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
        self.outputs = Outputs(state)
        self.gotos = Gotos(state, now)
        self.outcomes = Outcomes(state, now, self.gotos)
        self.decisions = Decisions(state, self.outcomes)
        self.changes = Changes(state, now)
        self._settling = Settling(state, conditions, self.outputs, self.outcomes, self.gotos)

    # ------------------------------------------------------------ queries

    def task_by_local(self, task_id: str) -> GraphTask | None:
        """The task a blueprint id names."""
        return task_by_local(self.state, task_id)

    def incoming(self, task_uuid: str) -> list[GraphEdge]:
        """Edges into a task."""
        return incoming(self.state, task_uuid)

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

    def running_ids(self) -> list[str]:
        """Workflow ids of every run in flight."""
        return [run for task in self.state.tasks.values() for run in runs_of(task)]

    def finished(self) -> bool:
        """Nothing left to run, wait for or resolve."""
        if self.state.holds:
            return False
        return all(
            t.status not in OPEN_TASK or (t.goto_only and not t.summoned and t.status == TaskStatus.PENDING)
            for t in self.state.tasks.values()
        )

    def failed_unhandled(self) -> list[GraphTask]:
        """Failed tasks whose failure no GOTO took up."""
        return [
            task
            for task in self.state.tasks.values()
            if task.status == TaskStatus.FAILED and task.failed_over_to is None
        ]

    # ------------------------------------------------------------ advancing

    def advance(self, progress: Progress | None = None) -> Progress:
        """Apply the rules until nothing changes; the runs and gates to start now (added to
        `progress`, what the step decided before)."""
        progress = progress or Progress()
        while True:
            self._settle_all(progress)
            if self.state.paused or self.state.cancelled:
                break
            self._pick_runs(progress)
            if not self._settle_all(progress):  # a start that failed (a loop with no list) moved on
                break
        # a run or a gate a GOTO reset again within this step is neither started nor asked
        progress.runs = [run for run in progress.runs if self._run_stands(run)]
        progress.gates = [gate for gate in dict.fromkeys(progress.gates) if self.decisions.is_open(gate)]
        return progress

    def unread(self) -> bool:
        """Offloaded loop instance outputs that what follows the loop waits for: the workflow reads
        them (`Outputs.needed_instances`) and advances again."""
        return bool(self.outputs.needed_instances())

    def record(self, report: TaskReport, progress: Progress) -> GraphTask | None:
        """Apply a run's report (`Outcomes.record`); the task when it changed."""
        return self.outcomes.record(report, progress)

    def _run_stands(self, run: Run) -> bool:
        """Whether a run picked in this step is still the task's current, running version."""
        task = self.state.tasks[run.task_uuid]
        version = current(task)
        if version is None or version.version != run.version or version.superseded:
            return False
        if run.instance is None:
            return task.status == TaskStatus.RUNNING
        return version.instances[run.instance].status == TaskStatus.RUNNING

    def _settle_all(self, progress: Progress) -> bool:
        """Resolve edges and settle tasks until nothing changes; whether anything did."""
        changed, any_change = True, False
        while changed:
            changed = self._settling.resolve_edges(progress)
            changed = self._settling.settle_pending(progress) or changed
            changed = settle_loops(self.state, self.outcomes, progress) or changed
            if not changed:
                changed = self.gotos.skip_left(progress)
            any_change = any_change or changed
        return any_change

    # ------------------------------------------------------------ starting

    def _pick_runs(self, progress: Progress) -> None:
        room = self.max_running - self.running_runs()
        tasks = [self.state.tasks[uuid] for uuid in self.state.order]
        first = [t for t in tasks if _highest(t)] + [t for t in tasks if not _highest(t)]
        for task in first:  # priority HIGHEST is favoured when the cap is reached
            if room <= 0:
                return
            if task.paused or task.task_uuid in self.state.holds:
                continue
            if task.status == TaskStatus.READY:
                if not self._items_unread(task):
                    room -= self._start(task, room, progress)
                continue
            version = current(task)
            if task.status == TaskStatus.RUNNING and version is not None and version.instances:
                room -= step_instances(task, version, room, progress)

    def _items_unread(self, task: GraphTask) -> bool:
        """A loop whose list still has offloaded parts to be read whole (it starts once they are)."""
        loop = loop_of(task)
        source = self.task_by_local(loop.input_source_task_id) if loop is not None else None
        return source is not None and self.outputs.unread(source)

    def _start(self, task: GraphTask, room: int, progress: Progress) -> int:
        """Start a ready task's next version (a loop: its first instances); the runs started."""
        version = self._new_version(task)
        note(task, TaskStatus.RUNNING, None, progress)
        if loop_of(task) is None:
            progress.runs.append(Run(task.task_uuid, version.version))
            return 1
        try:
            items = loop_items(self.task_by_local, self.outputs.of, task)
        except PathError as err:
            self.outcomes.fail(task, str(err), progress)
            return 0
        if not items:
            self.outcomes.complete(task, [], None, progress)
            return 0
        version.instances = [LoopInstance(index=i, item=item) for i, item in enumerate(items)]
        return step_instances(task, version, room, progress)

    def _new_version(self, task: GraphTask) -> TaskVersion:
        loop = loop_of(task)
        assignee = task.next_assignee_id or (loop.task_template if loop else task.definition).assignee_id
        version = TaskVersion(
            version=len(task.versions) + 1,
            input_data=task.next_input if task.next_input is not None else dict(task.definition.input_data),
            assignee_id=assignee,
            status=TaskStatus.RUNNING,
            started_at=self.now(),
        )
        task.versions.append(version)
        task.next_input, task.input_override, task.summoned = None, None, False
        return version


def _highest(task: GraphTask) -> bool:
    overrides = task.definition.context_overrides
    return overrides is not None and overrides.priority == "HIGHEST"
