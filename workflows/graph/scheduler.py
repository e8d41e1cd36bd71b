"""The graph's rules, applied to its state: the one owner of every task's status.

`Scheduler.advance` resolves every edge whose source has finished (CEL over its output; an error
stays on the edge and fails the target, never a silent false; a paused source holds its edges),
then settles each pending task whose edges are all resolved, and picks the runs to start within
the running-task cap (`priority: HIGHEST` first). Settling (`_settle`) is the one way to READY:
it builds the task's input by data flow and opens its gate when it has one, on every run: the
first, a rollback's, a GOTO's, each loop instance whose template is gated. A gate's decision
(`decide`) is the only other move to READY. `record` applies what a run reports; a failure
follows the task's `on_failure` GOTO (`resets`), a bounded number of times.

The operations people start are here too: `rollback` (with `release` once its cancelled runs have
ended: the rollback owns `holds` and `cancelling` meanwhile) and `update` (a plan's
`update_tasks`). Pure and deterministic: state in, state out, no commands; time comes from the
`now` it is given. The workflow turns `Progress` into child starts, gates and chunks.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from contracts import (
        FINISHED_TASK,
        EdgeStatus,
        GraphEdge,
        GraphIntervention,
        GraphTask,
        LoopInstance,
        TaskReport,
        TaskStatus,
        TaskUpdate,
        TaskVersion,
    )

    from .state import GraphState

from .blueprint import UPDATABLE_STATUS
from .cel import ConditionError, Conditions
from .loops import loop_items, loop_of, step_instances
from .paths import PathError, value_at
from .progress import OPEN_TASK, Gate, Progress, Run, current, gate_of, has_goto, note, note_instance, runs_of
from .resets import Reset, downstream, reset

GOTO_ATTEMPTS = 3
"""How many times an `on_failure` GOTO is followed when it does not say (`max_attempts`)."""


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
        self.whole: dict[str, Any] = {}
        """Whole outputs of offloaded answers (`output_key` → value), read by the workflow before
        `advance` (`needed_outputs`); not part of the state: read again after continue-as-new."""

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

    def output_of(self, task: GraphTask) -> Any:
        """The task's current output, whole (an offloaded answer as the workflow read it back)."""
        version = current(task)
        if version is None:
            return None
        if version.artifact is not None:
            return self.whole.get(output_key(task.task_uuid, version.version), version.output)
        return version.output

    def needed_outputs(self) -> list[tuple[str, Any]]:
        """Offloaded outputs something still needs whole (an edge to resolve, a loop to start), not
        read yet: (`output_key`, the artifact)."""
        sources = {edge.source for edge in self.state.edges if edge.status == EdgeStatus.WAITING}
        for task in self.state.tasks.values():
            loop = loop_of(task)
            if loop is not None and task.status in (TaskStatus.PENDING, TaskStatus.READY, TaskStatus.WAITING):
                source = self.task_by_local(loop.input_source_task_id)
                sources.update([source.task_uuid] if source else [])
        needed = []
        for uuid in sources:
            version = current(self.state.tasks[uuid])
            if version is None or version.artifact is None or version.status != TaskStatus.COMPLETED:
                continue
            key = output_key(uuid, version.version)
            if key not in self.whole:
                needed.append((key, version.artifact))
        return needed

    # ------------------------------------------------------------ advancing

    def advance(self) -> Progress:
        """Apply the rules until nothing changes; the runs and gates to start now."""
        progress = Progress()
        while True:
            self._settle_all(progress)
            if self.state.paused or self.state.cancelled:
                break
            self._pick_runs(progress)
            if not self._settle_all(progress):  # a start that failed (a loop with no list) moved on
                break
        # a run or a gate a GOTO reset again within this step is neither started nor asked
        progress.runs = [run for run in progress.runs if self._run_stands(run)]
        progress.gates = [gate for gate in dict.fromkeys(progress.gates) if self.gate_open(gate)]
        return progress

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
            changed = self._resolve_edges(progress)
            changed = self._settle_pending(progress) or changed
            changed = self._settle_loops(progress) or changed
            if not changed:
                changed = self._skip_handlers_left(progress)
            any_change = any_change or changed
        return any_change

    def _skip_handlers_left(self, progress: Progress) -> bool:
        """Nothing runs, asks or waits to start: no failure can come any more, so the GOTO
        handlers still pending are skipped (what waits for them then resolves, never hangs)."""
        tasks = self.state.tasks.values()
        if self.state.holds or any(
            t.status in (TaskStatus.RUNNING, TaskStatus.WAITING, TaskStatus.READY) for t in tasks
        ):
            return False
        left = [t for t in tasks if t.status == TaskStatus.PENDING and t.goto_only and not t.summoned]
        for task in left:
            note(task, TaskStatus.SKIPPED, "no failure led here (on_failure GOTO target)", progress)
        return bool(left)

    def _resolve_edges(self, progress: Progress) -> bool:
        changed = False
        holds = self.state.holds
        for edge in self.state.edges:
            if edge.status != EdgeStatus.WAITING or edge.target in holds or edge.source in holds:
                continue
            source = self.state.tasks[edge.source]
            if source.status not in FINISHED_TASK or source.paused:
                continue  # a paused task's result waits for RESUME before it flows on
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
        facts: dict[str, Any] = {"task_id": source.task_id, "version": version.version if version else 0}
        if not self.conditions.numbers:  # graphs started before `cel-numbers` still read it
            facts["status"] = source.status.upper()
        try:
            held = self.conditions.holds(edge.condition.expression, self.output_of(source), facts)
        except ConditionError as err:
            return EdgeStatus.ERROR, str(err)
        return (EdgeStatus.TAKEN if held else EdgeStatus.NOT_TAKEN), None

    def _settle_pending(self, progress: Progress) -> bool:
        changed = False
        for uuid in self.state.order:
            task = self.state.tasks[uuid]
            if task.status != TaskStatus.PENDING or uuid in self.state.holds:
                continue
            if task.goto_only and not task.summoned:
                changed = self._skip_unneeded_handler(task, progress) or changed
                continue
            incoming = self.incoming(uuid)
            if any(edge.status == EdgeStatus.WAITING for edge in incoming):
                continue
            changed = True
            self._settle(task, incoming, progress)
        return changed

    def _settle(self, task: GraphTask, incoming: list[GraphEdge], progress: Progress) -> None:
        """A pending task whose edges are resolved: skipped, failed, waiting at its gate or ready."""
        taken = [edge for edge in incoming if edge.status == EdgeStatus.TAKEN]
        if not task.summoned:  # a rollback or a GOTO asked for this run: edges cannot skip it
            blocked = next((e for e in incoming if self._blocks(self.state.tasks[e.source])), None)
            errors = [edge for edge in incoming if edge.status == EdgeStatus.ERROR]
            if blocked is not None:
                parent = self.state.tasks[blocked.source]
                note(task, TaskStatus.SKIPPED, f"parent {parent.task_id!r} {parent.status}", progress)
                return
            if errors:
                edge = errors[0]
                self.fail(task, f"edge {edge.source_task_id} → {edge.target_task_id}: {edge.error}", progress)
                return
            if incoming and not taken:
                names = ", ".join(f"{edge.source_task_id} → {edge.target_task_id}" for edge in incoming)
                note(task, TaskStatus.SKIPPED, f"no incoming edge was taken ({names})", progress)
                return
        try:
            task.next_input = self._input(task, taken)
        except PathError as err:
            self.fail(task, f"data flow into {task.task_id!r}: {err}", progress)
            return
        if gate_of(task) is not None:
            note(task, TaskStatus.WAITING, "waiting for a person's confirmation", progress)
            progress.gates.append(Gate(task.task_uuid))
        else:
            note(task, TaskStatus.READY, None, progress)

    def _skip_unneeded_handler(self, task: GraphTask, progress: Progress) -> bool:
        """A GOTO handler is skipped once every task whose GOTO names it has ended without failing
        over to it (what depends on it can then resolve, instead of waiting forever)."""
        naming = [
            other
            for other in self.state.tasks.values()
            if other.definition.directives
            and other.definition.directives.on_failure
            and other.definition.directives.on_failure.get("target_task_id") == task.task_id
        ]
        if any(other.status not in FINISHED_TASK for other in naming):
            return False
        note(task, TaskStatus.SKIPPED, "no failure led here (on_failure GOTO target)", progress)
        return True

    @staticmethod
    def _blocks(parent: GraphTask) -> bool:
        """A parent that failed or was cancelled, with no GOTO taking it up, blocks its children."""
        return parent.status in (TaskStatus.FAILED, TaskStatus.CANCELLED) and parent.failed_over_to is None

    def _input(self, task: GraphTask, taken: list[GraphEdge]) -> dict[str, Any]:
        data = dict(task.next_input if task.next_input is not None else task.definition.input_data)
        for edge in taken:
            if edge.data_flow is None:
                continue
            output = self.output_of(self.state.tasks[edge.source])
            for key, path in edge.data_flow.mappings.items():
                data[key] = value_at(output, path)
        return {**data, **(task.input_override or {})}

    # ------------------------------------------------------------ gates

    def opened(self, gate: Gate, interaction_id: str) -> None:
        """The workflow asked a person for `gate`; the decision must name this interaction."""
        task = self.state.tasks[gate.task_uuid]
        if gate.instance is None:
            task.gate_interaction = interaction_id
        else:
            self._instance(task, gate.instance).gate_interaction = interaction_id

    def gate_open(self, gate: Gate) -> bool:
        """Whether `gate` still waits for its decision (not rolled back, cancelled or decided)."""
        task = self.state.tasks.get(gate.task_uuid)
        if task is None:
            return False
        if gate.instance is None:
            return task.status == TaskStatus.WAITING
        version = current(task)
        return (
            task.status == TaskStatus.RUNNING
            and version is not None
            and gate.instance < len(version.instances)
            and version.instances[gate.instance].status == TaskStatus.WAITING
        )

    def decide(self, gate: Gate, interaction_id: str, approved: bool, how: str, progress: Progress) -> bool:
        """Apply a gate's decision (`how`: who confirmed, denied or let it time out); False when the
        gate is no longer waiting for this interaction (rolled back, cancelled, decided)."""
        task = self.state.tasks.get(gate.task_uuid)
        if task is None or not self.gate_open(gate):
            return False
        if gate.instance is not None:
            instance = self._instance(task, gate.instance)
            if instance.gate_interaction != interaction_id:
                return False
            instance.gate_interaction = None
            instance.error = None if approved else f"its gate was {how}"
            status = TaskStatus.READY if approved else TaskStatus.SKIPPED
            note_instance(task, instance, status, instance.error, progress)
            return True
        if task.gate_interaction != interaction_id:
            return False
        task.gate_interaction = None
        if approved:
            note(task, TaskStatus.READY, f"confirmed by {how}", progress)
        elif has_goto(task):
            self.fail(task, f"its gate was {how}", progress)
        else:
            note(task, TaskStatus.SKIPPED, f"its gate was {how}", progress)
        return True

    @staticmethod
    def _instance(task: GraphTask, index: int) -> LoopInstance:
        version = current(task)
        assert version is not None
        return version.instances[index]

    # ------------------------------------------------------------ loops

    def _settle_loops(self, progress: Progress) -> bool:
        changed = False
        for uuid in self.state.order:
            task = self.state.tasks[uuid]
            version = current(task)
            if task.status != TaskStatus.RUNNING or version is None or not version.instances:
                continue
            ended = next(
                (i for i in version.instances if i.status in (TaskStatus.FAILED, TaskStatus.CANCELLED)), None
            )
            if ended is not None:
                for instance in version.instances:
                    if instance.status == TaskStatus.RUNNING and instance.workflow_id:
                        progress.cancel.append(instance.workflow_id)
                    if instance.gate_interaction:
                        progress.withdraw.append(instance.gate_interaction)
                        instance.gate_interaction = None
                    if instance.status in OPEN_TASK:
                        instance.status = TaskStatus.CANCELLED
                self.fail(task, f"loop instance {ended.index} {ended.status}: {ended.error}", progress)
                changed = True
            elif all(i.status in (TaskStatus.COMPLETED, TaskStatus.SKIPPED) for i in version.instances):
                self._complete(task, [i.output for i in version.instances], None, progress)
                changed = True
        return changed

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
                room -= self._start(task, room, progress)
                continue
            version = current(task)
            if task.status == TaskStatus.RUNNING and version is not None and version.instances:
                room -= step_instances(task, version, room, progress)

    def _start(self, task: GraphTask, room: int, progress: Progress) -> int:
        """Start a ready task's next version (a loop: its first instances); the runs started."""
        version = self._new_version(task)
        note(task, TaskStatus.RUNNING, None, progress)
        if loop_of(task) is None:
            progress.runs.append(Run(task.task_uuid, version.version))
            return 1
        try:
            items = loop_items(self.task_by_local, self.output_of, task)
        except PathError as err:
            self.fail(task, str(err), progress)
            return 0
        if not items:
            self._complete(task, [], None, progress)
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
            instance.output, instance.error = report.output, report.error
            note_instance(task, instance, TaskStatus(report.status), report.error, progress)
            return task
        if task.status != TaskStatus.RUNNING:
            return None
        if report.status == "completed":
            self._complete(task, report.output, report, progress)
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

    def _complete(self, task: GraphTask, output: Any, report: TaskReport | None, progress: Progress) -> None:
        version = current(task)
        assert version is not None
        version.status, version.output, version.finished_at = TaskStatus.COMPLETED, output, self.now()
        version.artifact = report.artifact if report else None
        note(task, TaskStatus.COMPLETED, None, progress)

    def fail(self, task: GraphTask, error: str, progress: Progress) -> None:
        """Fail the task; follow its `on_failure` GOTO when it has one (within `max_attempts`)."""
        version = current(task)
        if version is not None and version.status in (TaskStatus.RUNNING, TaskStatus.PENDING):
            version.status, version.error, version.finished_at = TaskStatus.FAILED, error, self.now()
        note(task, TaskStatus.FAILED, error, progress)
        self._follow_failure(task, error, progress)

    def _follow_failure(self, task: GraphTask, error: str, progress: Progress) -> None:
        """Re-run the task's GOTO target (a new version, `input_data.failure` set) and everything
        downstream of it; past `max_attempts` the failure stands and names the target."""
        failure = task.definition.directives.on_failure if task.definition.directives else None
        target = self.task_by_local(str(failure.get("target_task_id"))) if failure else None
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

    # ------------------------------------------------------------ people's changes

    def rollback(self, task: GraphTask, request: GraphIntervention) -> Reset:
        """ROLLBACK_AND_MODIFY: reset the task and everything downstream (they re-run, each through
        its gate, once `release` is called after the cancelled runs ended); what to cancel and
        withdraw. The task starts from `rollback_to_version`'s inputs, `new_input_data` over them."""
        progress = Progress()
        note_text = f"rolled back by {request.principal}: {request.comment}"
        done = reset(self.state, task, note_text, self.now(), progress)
        base = task.versions[(request.rollback_to_version or len(task.versions)) - 1]
        task.next_input = dict(base.input_data)
        task.input_override = dict(request.new_input_data) if request.new_input_data else None
        task.next_assignee_id = request.new_assignee_id or base.assignee_id
        for uuid in done.affected:
            self.state.tasks[uuid].goto_attempts = 0  # a person starts the retries over
        self.state.holds = sorted({*self.state.holds, *done.affected})
        self.state.cancelling = sorted({*self.state.cancelling, *done.cancel})
        self.state.rolling_back = f"task {task.task_id!r} by {request.principal}"
        done.changes = progress.changes
        return done

    def release(self, done: Reset) -> None:
        """The rollback's cancelled runs ended (or were waited for long enough): let its tasks go."""
        self.state.holds = [uuid for uuid in self.state.holds if uuid not in done.affected]
        self.state.cancelling = [run for run in self.state.cancelling if run not in done.cancel]
        self.state.rolling_back = None

    def update(self, task: GraphTask, update: TaskUpdate, principal: str, progress: Progress) -> list[str]:
        """A plan's `update_tasks` on a task that has not started; the gates to withdraw (a task
        waiting at its gate, or confirmed, is asked again with its new input)."""
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

    def close(self, progress: Progress) -> None:
        """The graph ends: GOTO targets no failure led to are skipped."""
        for task in self.state.tasks.values():
            if task.goto_only and task.status == TaskStatus.PENDING:
                note(task, TaskStatus.SKIPPED, "no failure led here (on_failure GOTO target)", progress)

    def mark_goto_targets(self) -> None:
        """A GOTO target that nothing leads to by an edge, and that is upstream of no task whose
        GOTO names it (a handler, not a "retry from here"), waits for a failure."""
        targets: set[str] = set()
        retries: set[str] = set()
        for task in self.state.tasks.values():
            failure = task.definition.directives.on_failure if task.definition.directives else None
            target = self.task_by_local(str(failure.get("target_task_id"))) if failure else None
            if target is not None:
                targets.add(target.task_uuid)
                if task.task_uuid in downstream(self.state, target.task_uuid):
                    retries.add(target.task_uuid)
        fed = {edge.target for edge in self.state.edges}
        for task in self.state.tasks.values():
            if task.status == TaskStatus.PENDING and not task.versions:
                uuid = task.task_uuid
                task.goto_only = uuid in targets and uuid not in retries and uuid not in fed


def output_key(task_uuid: str, version: int) -> str:
    """How `Scheduler.whole` names one version's output."""
    return f"{task_uuid}:v{version}"


def _highest(task: GraphTask) -> bool:
    overrides = task.definition.context_overrides
    return overrides is not None and overrides.priority == "HIGHEST"
