"""Driving the pure scheduler through a script, the way the workflow does, and logging what a
person would see: each gate asked, each run started, each task's end.

A script is a list of steps: `("done", "a", output)`, `("fail", "a", error)`, `("yes"|"no", "a")`
(decide a's gate; `"a#1"`: loop instance 1's), `("rollback", "a", {...})` (released at once, or
held until `("release",)` when it ends with `"held"`), `("pause"|"resume", "a")`,
`("update", "a", {...})` (a plan's `update_tasks`), `("cancel", "a#0")` (a run ended cancelled).
Interventions pass the workflow's check first, and updates the door's (`expand`): a refused step
raises the typed `ApplicationError` the workflow answers with, before anything changes. After every
other step the scheduler advances; the log gets `ask a`, `run a v2`, `run loop#0 v1`.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from contracts import GraphConfig, GraphIntervention, PlanBlueprint, TaskReport
from workflows.graph.blueprint import BlueprintRefused, expand
from workflows.graph.cel import Conditions
from workflows.graph.interventions import check
from workflows.graph.plans import refused
from workflows.graph.rules import Reset, Scheduler
from workflows.graph.rules.progress import Gate, Progress, Run
from workflows.graph.run_inputs import run_input
from workflows.graph.state import GraphState

NOW = datetime(2026, 11, 23, tzinfo=UTC)


def build(blueprint: dict[str, Any], max_running: int = 100, *, reach: bool = True) -> Scheduler:
    """A scheduler over a fresh graph of `blueprint` (engine ids are UUIDs ending in 1, 2, ...);
    `reach` False accepts GOTOs whose target can never run (as graphs started before that check)."""
    state = GraphState(created_at=NOW, last_activity=NOW)
    ids = (f"00000000-0000-0000-0000-{n:012d}" for n in itertools.count(1))
    conditions = Conditions()
    added = expand(
        PlanBlueprint.model_validate(blueprint),
        tasks={},
        edges=[],
        new_id=lambda _local: next(ids),
        next_edge=1,
        principal="alice",
        conditions=conditions,
        reach=reach,
    )
    for new in added.tasks:
        state.tasks[new.task_uuid] = new
        state.order.append(new.task_uuid)
    state.edges += added.edges
    scheduler = Scheduler(state, conditions, lambda: NOW, max_running=max_running)
    scheduler.gotos.mark_targets()
    return scheduler


@dataclass
class Player:
    """Plays a script against a scheduler, as the workflow would."""

    scheduler: Scheduler
    log: list[str] = field(default_factory=list)
    gates: dict[str, str] = field(default_factory=dict)
    """Open gates: `a` or `a#1` → interaction id."""
    running: set[str] = field(default_factory=set)
    """Runs in flight: `a` or `a#1`."""
    cancelled: list[str] = field(default_factory=list)
    rollback: Reset | None = None
    asked: int = 0

    def uuid(self, task_id: str) -> str:
        found = self.scheduler.task_by_local(task_id)
        assert found is not None, task_id
        return found.task_uuid

    def advance(self) -> None:
        self.apply(self.scheduler.advance())

    def apply(self, progress: Progress) -> None:
        for interaction in progress.withdraw:
            self.gates = {k: v for k, v in self.gates.items() if v != interaction}
        for gate in progress.gates:
            name = self._name(gate.task_uuid, gate.instance)
            self.asked += 1
            self.gates[name] = f"i{self.asked}"
            self.scheduler.decisions.opened(gate, f"i{self.asked}")
            self.log.append(f"ask {name}")
        for run_id in progress.cancel:
            self.cancelled.append(run_id)
        for run in progress.runs:
            name = self._name(run.task_uuid, run.instance)
            self.running.add(name)
            self.log.append(f"run {name} v{run.version}")

    def _name(self, task_uuid: str, instance: int | None) -> str:
        task_id = self.scheduler.state.tasks[task_uuid].task_id
        return task_id if instance is None else f"{task_id}#{instance}"

    def _report(self, name: str, status: str, output: Any = None, error: str | None = None) -> None:
        task_id, _, index = name.partition("#")
        task = self.scheduler.state.tasks[self.uuid(task_id)]
        report = TaskReport.model_validate(
            {
                "task_uuid": task.task_uuid,
                "version": task.versions[-1].version,
                "instance": int(index) if index else None,
                "status": status,
                "output": output,
                "error": error,
            }
        )
        self.running.discard(name)
        progress = Progress()
        self.scheduler.record(report, progress)
        self.apply(progress)

    def step(self, step: tuple[Any, ...]) -> None:
        kind, *args = step
        if kind == "done":
            self._report(args[0], "completed", output=args[1] if len(args) > 1 else None)
        elif kind == "fail":
            self._report(args[0], "failed", error=args[1] if len(args) > 1 else "boom")
        elif kind == "cancel":
            self._report(args[0], "cancelled", error="cancelled in the Web UI")
        elif kind in ("yes", "no"):
            name = args[0]
            task_id, _, index = name.partition("#")
            gate = Gate(self.uuid(task_id), int(index) if index else None)
            progress = Progress()
            how = "bob" if kind == "yes" else "denied by bob"
            assert self.scheduler.decisions.decide(
                gate, self.gates.pop(name), kind == "yes", how, progress
            ), name
            self.apply(progress)
        elif kind == "rollback":
            task = self.scheduler.state.tasks[self.uuid(args[0])]
            request = self._intervention("ROLLBACK_AND_MODIFY", args[0], **(args[1] if len(args) > 1 else {}))
            check(self.scheduler.state, request)
            self.rollback = self.scheduler.changes.rollback(task, request)
            self.apply(
                Progress(
                    withdraw=self.rollback.gates, cancel=self.rollback.cancel, changes=self.rollback.changes
                )
            )
            for name in list(self.running):
                if self.scheduler.state.tasks[self.uuid(name.partition("#")[0])].versions[-1].superseded:
                    self.running.discard(name)
            if len(args) < 3 or args[2] != "held":
                self.scheduler.changes.release(self.rollback)
                self.rollback = None
        elif kind == "release":
            assert self.rollback is not None
            self.scheduler.changes.release(self.rollback)
            self.rollback = None
        elif kind in ("pause", "resume"):
            check(self.scheduler.state, self._intervention(kind.upper(), args[0]))
            self.scheduler.state.tasks[self.uuid(args[0])].paused = kind == "pause"
        elif kind == "update":
            self._update(args[0], args[1])
        else:
            raise ValueError(f"unknown step {step!r}")
        self.advance()

    def _intervention(self, kind: str, task_id: str, **request: Any) -> GraphIntervention:
        return GraphIntervention.model_validate(
            {
                "intervention_type": kind,
                "target_task_id": self.uuid(task_id),
                "comment": "again",
                "principal": "olga",
                **request,
            }
        )

    def _update(self, task_id: str, change: dict[str, Any]) -> None:
        """A plan's `update_tasks` of one task, as the workflow accepts it (`Plans.accept`)."""
        state = self.scheduler.state
        blueprint = PlanBlueprint.model_validate(
            {"update_tasks": [{"task_id": self.uuid(task_id), **change}]}
        )
        try:
            added = expand(
                blueprint,
                tasks=state.tasks,
                edges=state.edges,
                new_id=lambda local: local,
                next_edge=state.next_edge,
                principal="alice",
                conditions=self.scheduler.conditions,
            )
        except BlueprintRefused as err:
            raise refused(err) from err
        progress = Progress()
        for update in added.updates:
            task = state.tasks[str(update.task_uuid)]
            progress.withdraw += self.scheduler.changes.update(task, update, "alice", progress)
        self.scheduler.gotos.mark_targets()
        self.apply(progress)

    def play(self, steps: list[tuple[Any, ...]]) -> Player:
        self.advance()
        for step in steps:
            self.step(step)
        return self

    def statuses(self) -> dict[str, str]:
        return {t.task_id: t.status.value for t in self.scheduler.state.tasks.values()}

    def task(self, task_id: str) -> Any:
        return self.scheduler.state.tasks[self.uuid(task_id)]

    def input_of(self, name: str) -> dict[str, Any]:
        """The input a run is given (`a`: the task's current version, `a#1`: its loop instance 1)."""
        task_id, _, index = name.partition("#")
        task = self.task(task_id)
        run = Run(task.task_uuid, task.versions[-1].version, int(index) if index else None)
        return run_input("graph:g", GraphConfig(graph_id="g"), self.scheduler.state, run, {}).input_data

    def waiting(self) -> list[str]:
        """Tasks and loop instances waiting at their gate (`a`, `a#1`)."""
        names = []
        for task in self.scheduler.state.tasks.values():
            if task.status == "waiting":
                names.append(task.task_id)
            if task.versions and task.status == "running":
                names += [
                    f"{task.task_id}#{i.index}" for i in task.versions[-1].instances if i.status == "waiting"
                ]
        return sorted(names)


def play(blueprint: dict[str, Any], steps: list[tuple[Any, ...]], max_running: int = 100) -> Player:
    """Play `steps` on a fresh graph of `blueprint`."""
    return Player(build(blueprint, max_running)).play(steps)
