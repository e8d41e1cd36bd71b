"""The graph's rules over random blueprints (hypothesis): random DAGs with conditions, joins,
gates, failures, GOTOs and loops, played with random decisions, rollbacks and pauses.

Invariants: every run ends (nothing left running or asked, and the scheduler says finished); no
task starts before every source of its edges has ended; no task the door calls unreachable (`reach`:
the target of a GOTO it refuses) ever runs or asks; a gated task asks once for each of its
runs; every status change is an event; and, without GOTOs, rollbacks and loops, where each task
ends matches a simple reference interpreter.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contracts import FINISHED_TASK
from workflows.graph.cel import Conditions
from workflows.graph.reach import Shape, runnable
from workflows.graph.rules.progress import Progress

from .script import Player, build
from .test_blueprint import edge, task

Conditions().check("!output.go")  # celpy raises the recursion limit once; before hypothesis watches it


@dataclass
class Fate:
    """How a task behaves: its output's `go`, the runs that fail first, its gate's answer."""

    go: bool
    failures: int
    gated: bool
    approve: bool


@st.composite
def graphs(draw: st.DrawFn, *, wild: bool) -> tuple[dict[str, Any], dict[str, Fate]]:
    size = draw(st.integers(1, 7))
    names = [f"t{i}" for i in range(size)]
    fates = {
        name: Fate(
            go=draw(st.booleans()),
            failures=draw(st.sampled_from([0, 0, 0, 1, 5])),
            gated=draw(st.booleans()),
            approve=draw(st.sampled_from([True, True, False])),
        )
        for name in names
    }
    tasks, edges = [], []
    for j, name in enumerate(names):
        directives: dict[str, Any] = {}
        if fates[name].gated:
            directives["human_interaction"] = {"prompt": "go?"}
        if wild and j and draw(st.booleans()):
            target = draw(st.sampled_from(names[:j] + names[j + 1 :]))
            directives["on_failure"] = {
                "type": "GOTO",
                "target_task_id": target,
                "max_attempts": draw(st.integers(1, 2)),
            }
        if wild and j and draw(st.integers(0, 4)) == 0:
            directives["loop_directive"] = {
                "type": draw(st.sampled_from(["PARALLEL_ITERATION", "SERIAL_ITERATION"])),
                "iteration_input_key": "items",
                "input_source_task_id": draw(st.sampled_from(names[:j])),
                "task_template": task(f"{name}_each", directives={"human_interaction": {}})
                if fates[name].gated
                else task(f"{name}_each"),
            }
            directives.pop("human_interaction", None)
        tasks.append(task(name, directives=directives or None))
        for i in range(j):
            if draw(st.integers(0, 2)) == 0:
                condition = draw(st.sampled_from([None, "output.go", "!output.go"]))
                edges.append(
                    edge(names[i], name, condition={"evaluator": "CEL", "expression": condition})
                    if condition
                    else edge(names[i], name)
                )
    return {"new_tasks": tasks, "new_edges": edges}, fates


class Checked(Player):
    """A player that checks the invariants on every step."""

    fates: dict[str, Fate]
    runs: dict[str, int]
    asks: dict[str, int]
    events: list[dict[str, Any]]
    can_run: set[str]

    def apply(self, progress: Progress) -> None:
        state = self.scheduler.state
        for uuid in [run.task_uuid for run in progress.runs] + [gate.task_uuid for gate in progress.gates]:
            name = state.tasks[uuid].task_id
            assert name in self.can_run, f"{name} started or asked, but the door says it can never run"
        for run in progress.runs:
            task = state.tasks[run.task_uuid]
            for incoming in self.scheduler.incoming(task.task_uuid):
                source = state.tasks[incoming.source]
                assert source.status in FINISHED_TASK, f"{task.task_id} started before {source.task_id} ended"
            if run.instance is None:
                self.runs[task.task_id] = self.runs.get(task.task_id, 0) + 1
        for gate in progress.gates:
            key = state.tasks[gate.task_uuid].task_id + ("" if gate.instance is None else f"#{gate.instance}")
            self.asks[key] = self.asks.get(key, 0) + 1
        self.events += [c for c in progress.changes if "task_uuid" in c and "instance" not in c]
        super().apply(progress)

    def step(self, step: tuple[Any, ...]) -> None:
        """Every task whose status changed in the step was announced, last with its new status."""
        before = {t.task_uuid: t.status for t in self.scheduler.state.tasks.values()}
        self.events = []
        super().step(step)
        for changed in self.scheduler.state.tasks.values():
            if changed.status != before[changed.task_uuid]:
                told = [c["status"] for c in self.events if c["task_uuid"] == changed.task_uuid]
                assert told and told[-1] == changed.status, (changed.task_id, before[changed.task_uuid], told)

    def outputs(self, name: str) -> dict[str, Any]:
        return {"go": self.fates[name].go, "items": [1, 2]}


def shape(player: Player) -> Shape:
    """The graph as the door's reachability sees it."""
    state = player.scheduler.state
    gotos = {}
    for one in state.tasks.values():
        failure = one.definition.directives.on_failure if one.definition.directives else None
        if failure:
            gotos[one.task_id] = failure["target_task_id"]
    edges = [(e.source_task_id, e.target_task_id) for e in state.edges]
    return Shape(tasks=[t.task_id for t in state.tasks.values()], edges=edges, gotos=gotos)


def drive(blueprint: dict[str, Any], fates: dict[str, Fate], data: st.DataObject, wild: bool) -> Checked:
    player = Checked(build(blueprint, max_running=3, reach=False))
    player.fates, player.runs, player.asks, player.events = fates, {}, {}, []
    player.can_run = runnable(shape(player))
    failed: dict[str, int] = {}
    interventions = 6
    player.advance()
    for _ in range(400):
        moves: list[tuple[Any, ...]] = []
        for name in sorted(player.running):
            base = name.partition("#")[0]
            fate = fates.get(base)
            if fate is None:
                continue
            if failed.get(name, 0) < fate.failures:
                moves.append(("fail", name))
            else:
                moves.append(("done", name, player.outputs(base)))
        for name in sorted(player.gates):
            fate = fates[name.partition("#")[0]]
            moves.append(("yes" if fate.approve else "no", name))
        if wild and interventions:
            finished = [
                t.task_id
                for t in player.scheduler.state.tasks.values()
                if t.status in FINISHED_TASK and t.versions and not player.scheduler.state.rolling_back
            ]
            moves += [("rollback", name) for name in finished[:2]]
            moves += [("pause", t.task_id) for t in player.scheduler.state.tasks.values() if not t.paused][:1]
            moves += [("resume", t.task_id) for t in player.scheduler.state.tasks.values() if t.paused]
        if not moves:
            if any(t.paused for t in player.scheduler.state.tasks.values()):
                for t in player.scheduler.state.tasks.values():
                    t.paused = False
                player.advance()
                continue
            break
        move = data.draw(st.sampled_from(moves))
        if move[0] in ("rollback", "pause", "resume"):
            interventions -= 1
        if move[0] == "fail":
            failed[move[1]] = failed.get(move[1], 0) + 1
        player.step(move)
    else:
        raise AssertionError("the play did not end")
    for t in player.scheduler.state.tasks.values():
        t.paused = False
    player.advance()
    assert not player.running and not player.gates, (player.running, player.gates)
    assert player.scheduler.finished(), player.statuses()
    return player


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_every_run_ends_and_every_gated_run_asks_first(data: st.DataObject) -> None:
    blueprint, fates = data.draw(graphs(wild=True))
    player = drive(blueprint, fates, data, wild=True)
    for current in player.scheduler.state.tasks.values():
        if fates[current.task_id].gated and not (
            current.definition.directives and current.definition.directives.loop_directive
        ):
            runs = player.runs.get(current.task_id, 0)
            assert player.asks.get(current.task_id, 0) >= runs, (current.task_id, player.log)
            # exactly one ask before each run: asks are followed by at most one run each
            asked = [
                line
                for line in player.log
                if line == f"ask {current.task_id}" or line.startswith(f"run {current.task_id} v")
            ]
            for earlier, later in itertools.pairwise(asked):
                assert not (earlier.startswith("run") and later.startswith("run")), (
                    current.task_id,
                    player.log,
                )
            if asked:
                assert asked[0].startswith("ask"), (current.task_id, player.log)


def reference(blueprint: dict[str, Any], fates: dict[str, Fate]) -> dict[str, str]:
    """Where each task ends, by the rules in the README, without GOTOs, rollbacks or loops."""
    status: dict[str, str] = {}
    for definition in blueprint["new_tasks"]:
        name = definition["task_id"]
        incoming = [e for e in blueprint["new_edges"] if e["target_task_id"] == name]
        taken = []
        for e in incoming:
            source = e["source_task_id"]
            condition = (e.get("condition") or {}).get("expression")
            go = fates[source].go
            holds = condition is None or (go if condition == "output.go" else not go)
            taken.append(status[source] == "completed" and holds)
        fate = fates[name]
        if any(status[e["source_task_id"]] == "failed" for e in incoming):
            status[name] = "skipped"
        elif incoming and not any(taken):
            status[name] = "skipped"
        elif fate.gated and not fate.approve:
            status[name] = "skipped"
        else:
            status[name] = "failed" if fate.failures else "completed"
    return status


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_where_tasks_end_matches_the_reference(data: st.DataObject) -> None:
    blueprint, fates = data.draw(graphs(wild=False))
    player = drive(blueprint, fates, data, wild=False)
    assert player.statuses() == reference(blueprint, fates)
