"""The graph's rules over random blueprints (hypothesis): random DAGs with conditions, data flow,
joins, gates, failures, GOTOs and loops (gated templates too), played with gates answered at
random, rollbacks (held, and a second one tried meanwhile), updates and pauses.

Invariants, checked on every step (`Checked`):
- every run ends: the play stops with nothing running or asked, and the scheduler says finished;
- no task or loop instance starts (or asks) before every edge into it is resolved and its sources
  have ended, nor while it is paused or held by a rollback; none the door calls unreachable
  (`reach`) ever does;
- a gated task, and each loop instance of a gated template, asks exactly once before each run:
  a run follows a confirmed ask of its own, a re-run asks again, an open gate is never asked again,
  and what has no gate never asks;
- every status change is an event: replaying the events gives the statuses of every task and of
  the current loop instances, after every step;
- a rollback while another is held is refused (`RollbackInFlight`), and so is an update of a task
  that has started (`TaskStarted`); neither changes anything.
And (`reference`): where each task ends, what each completed task outputs (data flow, loop
outputs, a GOTO's `failure`) and which failures fail the graph match a simple interpreter of the
README's rules, pauses or not.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from temporalio.exceptions import ApplicationError

from contracts import FINISHED_TASK, EdgeChanged, EdgeStatus, ErrorType, GraphTask, TaskChanged, TaskStatus
from workflows.graph.blueprint import NOT_STARTED
from workflows.graph.cel import Conditions
from workflows.graph.reach import Shape, runnable
from workflows.graph.rules.progress import Progress, current

from .script import Player, build
from .test_blueprint import edge, task

Conditions().check("!output.go")  # celpy raises the recursion limit once; before hypothesis watches it

PATHS = ["output.go", "output.items", "output.seen.echo"]
"""What data flow copies from a task's output (a loop's output is a list: it copies `output`)."""
ROLLBACKS: list[dict[str, Any]] = [{}, {"new_input_data": {"fixed": True}}, {"rollback_to_version": 1}]
UPDATES: list[dict[str, Any]] = [
    {"new_input_data": {"echo": "updated"}},
    {"new_status": "skipped"},
    {"new_status": "cancelled"},
]
DENIED = "its gate was denied by bob"
"""A denied gate's error, as the script denies (a failure its GOTO takes up)."""


@dataclass
class Fate:
    """How a task behaves: its output's `go` and list, the runs that fail first, its gate."""

    go: bool
    items: int
    failures: int
    gated: bool
    approve: bool


def answer(name: str, fate: Fate, input_data: dict[str, Any]) -> dict[str, Any]:
    """What a task's agent (or a loop instance's) answers: its fate, and the input it was given."""
    return {"go": fate.go, "items": [f"{name}.{k}" for k in range(fate.items)], "seen": input_data}


def loop_of(definition: dict[str, Any]) -> dict[str, Any] | None:
    return (definition.get("directives") or {}).get("loop_directive")


def goto_of(definition: dict[str, Any]) -> dict[str, Any] | None:
    return (definition.get("directives") or {}).get("on_failure")


def dependencies(blueprint: dict[str, Any]) -> list[dict[str, Any]]:
    """The blueprint's edges, and a loop's on the source of its list when it has none."""
    edges = list(blueprint["new_edges"])
    for definition in blueprint["new_tasks"]:
        loop = loop_of(definition)
        pair = (loop["input_source_task_id"], definition["task_id"]) if loop else None
        if pair and not any((e["source_task_id"], e["target_task_id"]) == pair for e in edges):
            edges.append(edge(*pair))
    return edges


def below(edges: list[dict[str, Any]], name: str) -> set[str]:
    """Every task downstream of `name`."""
    found: set[str] = set()
    stack = [name]
    while stack:
        source = stack.pop()
        for e in edges:
            if e["source_task_id"] == source and e["target_task_id"] not in found:
                found.add(e["target_task_id"])
                stack.append(e["target_task_id"])
    return found


@st.composite
def graphs(draw: st.DrawFn, *, wild: bool) -> tuple[dict[str, Any], dict[str, Fate]]:
    """A random blueprint and its tasks' fates. `wild`: GOTOs anywhere, any task may fail, edges
    from loops may have conditions (a CEL error); else at most one GOTO (from a task that is not a
    loop), and what its target re-runs never fails but its source: one outcome, whatever the order."""
    size = draw(st.integers(1, 7))
    names = [f"t{i}" for i in range(size)]
    fates = {
        name: Fate(
            go=draw(st.booleans()),
            items=draw(st.integers(0, 2)),
            failures=draw(st.sampled_from([0, 0, 0, 1, 5])),
            gated=draw(st.booleans()),
            approve=draw(st.sampled_from([True, True, False])),
        )
        for name in names
    }
    tasks, edges, loops = [], [], set()
    for j, name in enumerate(names):
        directives: dict[str, Any] = {}
        if j and draw(st.integers(0, 3)) == 0:
            loops.add(name)
            gate = {"human_interaction": {"prompt": "each?"}} if fates[name].gated else None
            directives["loop_directive"] = {
                "type": draw(st.sampled_from(["PARALLEL_ITERATION", "SERIAL_ITERATION"])),
                "iteration_input_key": "items",
                "input_source_task_id": draw(st.sampled_from(names[:j])),
                "task_template": task(f"{name}_each", directives=gate),
                "max_iterations": draw(st.sampled_from([None, None, 1])),
            }
        elif fates[name].gated:
            directives["human_interaction"] = {"prompt": "go?"}
        tasks.append(task(name, directives=directives))
        for source in names[:j]:
            if draw(st.integers(0, 2)):
                continue
            extra: dict[str, Any] = {}
            condition = draw(st.sampled_from([None, "output.go", "!output.go"]))
            if condition and (wild or source not in loops):
                extra["condition"] = {"evaluator": "CEL", "expression": condition}
            if draw(st.booleans()):
                path = "output" if source in loops else draw(st.sampled_from(PATHS))
                extra["data_flow"] = {"mappings": {f"from_{source}": path}}
            edges.append(edge(source, name, **extra))
    blueprint = {"new_tasks": tasks, "new_edges": edges}
    sources = [j for j in range(1, size) if wild or names[j] not in loops]
    for j in sources if wild else sources[: draw(st.sampled_from([0, 1, 1]))]:
        if wild and draw(st.booleans()):
            continue
        upstream = [name for name in names[:j] if names[j] in below(dependencies(blueprint), name)]
        back = bool(upstream) and draw(st.booleans())  # a retry loop, as often as anything else
        target = draw(st.sampled_from(upstream if back else names[:j] + names[j + 1 :]))
        failure: dict[str, Any] = {"type": "GOTO", "target_task_id": target}
        attempts = draw(st.sampled_from([None, None, 1, 2]))
        failure.update({"max_attempts": attempts} if attempts else {})
        tasks[j]["directives"] = {**tasks[j]["directives"], "on_failure": failure}
        if not wild:  # what the target re-runs runs more than once: only the GOTO's source fails
            for name in {target} | below(dependencies(blueprint), target) - {names[j]}:
                fates[name].failures = 0
            fates[names[j]].failures = draw(st.sampled_from([0, 1, 2, 3, 5]))
    return blueprint, fates


@dataclass
class Checked(Player):
    """A player that plays the agents and people of `fates` and checks the invariants on every step."""

    fates: dict[str, Fate] = field(default_factory=dict)
    can_run: set[str] = field(default_factory=set)
    told: dict[str, TaskStatus] = field(default_factory=dict)
    """Each task's status, as the events told it."""
    told_instances: dict[str, dict[int, TaskStatus]] = field(default_factory=dict)
    """Each loop's current instances' statuses, as the events told them."""
    told_version: dict[str, int] = field(default_factory=dict)
    gate_of_run: dict[str, str] = field(default_factory=dict)
    """`t1`, `t3#0@v2` → asked, confirmed, denied or ran."""
    refusals: int = 0
    """Interventions refused (a rollback while one is held, an update of a task that started)."""

    def __post_init__(self) -> None:
        self.can_run = runnable(shape(self))
        self.told = {uuid: TaskStatus.PENDING for uuid in self.scheduler.state.tasks}
        self._compare()

    def key(self, task: GraphTask, instance: int | None, version: int | None = None) -> str:
        if instance is None:
            return task.task_id
        number = version if version is not None else task.versions[-1].version
        return f"{task.task_id}#{instance}@v{number}"

    def gated(self, task: GraphTask, instance: int | None) -> bool:
        directives = task.definition.directives
        if instance is not None:
            assert directives is not None and directives.loop_directive is not None
            directives = directives.loop_directive.task_template.directives
        return directives is not None and directives.human_interaction is not None

    def apply(self, progress: Progress) -> None:
        state = self.scheduler.state
        still_open = {name for name, asked in self.gates.items() if asked not in progress.withdraw}
        for gate in progress.gates:
            task = state.tasks[gate.task_uuid]
            key = self.key(task, gate.instance)
            name = task.task_id if gate.instance is None else f"{task.task_id}#{gate.instance}"
            assert task.task_id in self.can_run, f"{key} asks, but the door says it can never run"
            assert self.gated(task, gate.instance), f"{key} asks, but has no gate"
            assert name not in still_open, f"{key} asked again while its gate is open"
            self.sources_ended(task, f"{key} asked")
            self.gate_of_run[key] = "asked"
        for run in progress.runs:
            task = state.tasks[run.task_uuid]
            key = self.key(task, run.instance, run.version)
            assert task.task_id in self.can_run, f"{key} started, but the door says it can never run"
            assert not task.paused, f"{key} started while paused"
            assert task.task_uuid not in state.holds, f"{key} started while a rollback holds it"
            self.sources_ended(task, f"{key} started")
            if self.gated(task, run.instance):
                assert self.gate_of_run.get(key) == "confirmed", (key, self.gate_of_run.get(key), self.log)
                self.gate_of_run[key] = "ran"
            else:
                assert key not in self.gate_of_run, (key, self.log)
        super().apply(progress)
        self.replay(progress.changes)

    def sources_ended(self, task: GraphTask, what: str) -> None:
        state = self.scheduler.state
        for incoming in self.scheduler.incoming(task.task_uuid):
            source = state.tasks[incoming.source]
            assert source.status in FINISHED_TASK, f"{what} before {source.task_id} ended"
            assert incoming.status != EdgeStatus.WAITING, (
                f"{what} before its edge from {source.task_id} resolved"
            )

    def replay(self, changes: list[TaskChanged | EdgeChanged]) -> None:
        """Replay the status events, then compare with the state."""
        edges = {edge.edge_id: edge for edge in self.scheduler.state.edges}
        for change in changes:
            if isinstance(change, EdgeChanged):  # an edge resolved: its source's result flows on
                source = self.scheduler.state.tasks[edges[change.edge].source]
                assert not source.paused, f"{source.task_id}'s result flowed on while it was paused"
                continue
            uuid = change.task_uuid
            if change.instance is not None:
                self.told_instances.setdefault(uuid, {})[change.instance] = change.status
                continue
            if change.status == TaskStatus.RUNNING and change.version != self.told_version.get(uuid):
                self.told_version[uuid] = change.version or 0
                self.told_instances[uuid] = {}  # a new version's instances start pending
            self.told[uuid] = change.status
        self._compare()

    def _compare(self) -> None:
        for one in self.scheduler.state.tasks.values():
            assert self.told[one.task_uuid] == one.status, (
                one.task_id,
                self.told[one.task_uuid],
                one.status,
            )
            version = current(one)
            instances = {i.index: i.status for i in version.instances} if version else {}
            told = self.told_instances.get(one.task_uuid, {})
            assert set(told) <= set(instances), (one.task_id, told, instances)
            told = {index: told.get(index, TaskStatus.PENDING) for index in instances}
            assert told == instances, (one.task_id, told, instances)

    def step(self, step: tuple[Any, ...]) -> None:
        kind, *args = step
        state = self.scheduler.state
        if kind == "rollback" and state.rolling_back:
            before = state.model_dump()
            with pytest.raises(ApplicationError) as refusal:
                super().step(step)
            assert refusal.value.type == ErrorType.ROLLBACK_IN_FLIGHT, refusal.value
            assert state.model_dump() == before, "a refused rollback changed the graph"
            self.refusals += 1
            return
        if kind == "update" and self.task(args[0]).status not in NOT_STARTED:
            before = state.model_dump()
            with pytest.raises(ApplicationError) as refusal:
                super().step(step)
            assert refusal.value.type == ErrorType.TASK_STARTED, refusal.value
            assert state.model_dump() == before, "a refused update changed the graph"
            self.refusals += 1
            return
        if kind in ("yes", "no"):
            task_id, _, index = args[0].partition("#")
            key = self.key(self.task(task_id), int(index) if index else None)
            assert self.gate_of_run.get(key) == "asked", (key, self.gate_of_run.get(key))
            self.gate_of_run[key] = "confirmed" if kind == "yes" else "denied"
        if kind == "done" and len(args) == 1:
            base = args[0].partition("#")[0]
            step = ("done", args[0], answer(base, self.fates[base], self.input_of(args[0])))
        super().step(step)
        self._compare()


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


def drive(blueprint: dict[str, Any], fates: dict[str, Fate], data: st.DataObject, *, wild: bool) -> Checked:
    """Play the graph to its end: runs end as their fates say, gates are answered (at random when
    `wild`, else as the fates say), and a few interventions come in between (`wild`: rollbacks,
    held or not, and a second one tried while one is held; updates, refused for a task that has
    started; and pauses)."""
    cap = data.draw(st.sampled_from([1, 2, 3, 100]))  # the running-task cap: tasks wait ready behind it
    player = Checked(build(blueprint, max_running=cap, reach=False), fates=fates)
    state = player.scheduler.state
    failed: dict[str, int] = {}
    budget = {"rollback": 4, "update": 2, "pause": 3, "resume": 3}
    player.advance()
    for _ in range(400):
        moves: list[tuple[Any, ...]] = []
        for name in sorted(player.running):
            base = name.partition("#")[0]
            moves.append(("fail", name) if failed.get(name, 0) < fates[base].failures else ("done", name))
        for name in sorted(player.gates):
            fate = fates[name.partition("#")[0]]
            moves += [("yes", name), ("no", name)] if wild else [("yes" if fate.approve else "no", name)]
        if state.rolling_back:
            moves.append(("release",))
        tasks = list(state.tasks.values())
        targets = {
            "rollback": [t.task_id for t in tasks if t.versions and wild],
            "update": [t.task_id for t in tasks if wild],
            "pause": [t.task_id for t in tasks if not t.paused and t.status not in FINISHED_TASK],
            "resume": [t.task_id for t in tasks if t.paused],
        }
        moves += [(kind,) for kind, names in targets.items() if names and budget[kind]]
        if not moves:
            if any(t.paused for t in state.tasks.values()):
                for t in state.tasks.values():
                    t.paused = False
                player.advance()
                continue
            break
        move = data.draw(st.sampled_from(moves))
        if move[0] in targets:
            budget[move[0]] -= 1
            move = (move[0], data.draw(st.sampled_from(targets[move[0]])))
        if move[0] == "rollback":
            move = (*move, data.draw(st.sampled_from(ROLLBACKS)), data.draw(st.sampled_from(["held", ""])))
        if move[0] == "update":
            move = (*move, data.draw(st.sampled_from(UPDATES)))
        if move[0] == "fail":
            failed[move[1]] = failed.get(move[1], 0) + 1
        player.step(move)
    else:
        raise AssertionError("the play did not end")
    for t in state.tasks.values():
        t.paused = False
    player.advance()
    assert not player.running and not player.gates, (player.running, player.gates)
    assert player.scheduler.finished(), player.statuses()
    return player


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_every_run_ends_starts_after_its_sources_asks_once_and_is_told(data: st.DataObject) -> None:
    blueprint, fates = data.draw(graphs(wild=True))
    drive(blueprint, fates, data, wild=True)


def reference(
    blueprint: dict[str, Any], fates: dict[str, Fate], uuids: dict[str, str]
) -> tuple[dict[str, str], dict[str, Any], list[str]]:
    """Where each task ends, what each completed one outputs, and the failures no GOTO took up (they
    fail the graph), by the README's rules, worked out task by task in blueprint order (every edge
    goes forward); at most one GOTO.

    A task whose parent failed (a failure no GOTO took up) is skipped; so is one none of whose
    edges was taken (a condition false, or its source did not complete), and one whose gate is
    denied (a denied task with a GOTO fails instead). Its input is its `input_data`, then the values
    its taken edges' data flow copies. A loop runs its template once per item of its source's
    output (the list, or its `items`), at most `max_iterations` (it fails when its source did not
    complete but its other edges were taken): each instance's input is the template's, then the
    loop's, then the item; a denied instance's output is null; the loop fails when an instance
    fails. A failure with a GOTO (followed at most `max_attempts` times, default 3) re-runs the
    target, with `failure` in its input, whatever its edges say, and everything downstream of it;
    a target nothing leads to and not upstream of the failing task (a handler) runs only then.
    """
    order = [d["task_id"] for d in blueprint["new_tasks"]]
    defs = {d["task_id"]: d for d in blueprint["new_tasks"]}
    edges = dependencies(blueprint)
    into = {name: [e for e in edges if e["target_task_id"] == name] for name in order}
    gotos = [(name, goto) for name in order if (goto := goto_of(defs[name]))]
    assert len(gotos) <= 1
    source, failure = gotos[0] if gotos else (None, {})
    target = failure.get("target_task_id")
    limit = failure.get("max_attempts", 3)
    rerun = {target} | below(edges, target) if target else set()
    handler = target is not None and not into[target] and source not in rerun
    status: dict[str, str] = {}
    output: dict[str, Any] = {}
    taken_up: set[str] = set()  # a failure a GOTO took up does not skip the failed task's children
    follow: dict[str, Any] | None = None  # the next GOTO to follow (its `failure`)
    attempts, runs = 0, 0

    def fail(name: str, error: str) -> None:
        nonlocal attempts, follow
        status[name] = "failed"
        if name == source and attempts < limit:
            attempts += 1
            taken_up.add(name)
            follow = {"task_id": name, "task_uuid": uuids[name], "error": error, "attempt": attempts}

    def holds(e: dict[str, Any]) -> bool:
        name = e["source_task_id"]
        expression = (e.get("condition") or {}).get("expression")
        if status[name] != "completed":
            return False
        return expression is None or output[name]["go"] == (expression == "output.go")

    def settle(name: str, failure: dict[str, Any] | None) -> None:
        nonlocal runs
        definition, fate = defs[name], fates[name]
        status.pop(name, None)
        output.pop(name, None)
        taken_up.discard(name)
        taken = [e for e in into[name] if holds(e)]
        if failure is None:  # a GOTO's target runs whatever its edges say
            parents = [e["source_task_id"] for e in into[name]]
            if any(status[p] == "failed" and p not in taken_up for p in parents):
                status[name] = "skipped"
                return
            if (into[name] and not taken) or (handler and name == target):
                status[name] = "skipped"
                return
        data = {**definition["input_data"], **({"failure": failure} if failure else {})}
        for e in taken:
            for key, path in ((e.get("data_flow") or {}).get("mappings") or {}).items():
                value = output[e["source_task_id"]]
                for step in path.split(".")[1:]:
                    value = value[step]
                data[key] = value
        loop = loop_of(definition)
        if loop is not None:
            if status[loop["input_source_task_id"]] != "completed":  # its other edges were taken
                fail(name, "its list's source did not complete")
                return
            listed = output[loop["input_source_task_id"]]
            items = listed if isinstance(listed, list) else listed["items"]
            items = items[: loop["max_iterations"]] if loop.get("max_iterations") else items
            template = loop["task_template"]
            denied = bool((template.get("directives") or {}).get("human_interaction")) and not fate.approve
            if fate.failures and items and not denied:
                fail(name, "an instance failed")
                return
            status[name] = "completed"
            output[name] = [
                None if denied else answer(name, fate, {**template["input_data"], **data, "items": item})
                for item in items
            ]
            return
        if fate.gated and not fate.approve:
            if name == source:
                fail(name, DENIED)
            else:
                status[name] = "skipped"
            return
        if name == source:
            runs += 1
        if (runs if name == source else 1) <= fate.failures:  # its first `failures` runs fail
            fail(name, "boom")
            return
        status[name] = "completed"
        output[name] = answer(name, fate, data)

    for name in order:
        settle(name, None)
    while follow is not None:
        failure, follow = follow, None
        for name in order:
            if name in rerun:
                settle(name, failure if name == target else None)
    completed = {name: output[name] for name in order if status[name] == "completed"}
    return status, completed, [name for name in order if status[name] == "failed" and name not in taken_up]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_where_tasks_end_and_what_they_output_match_the_reference(data: st.DataObject) -> None:
    blueprint, fates = data.draw(graphs(wild=False))
    player = drive(blueprint, fates, data, wild=False)
    outputs = player.scheduler.outputs
    ended = {
        t.task_id: outputs.of(t)
        for t in player.scheduler.state.tasks.values()
        if t.status == TaskStatus.COMPLETED
    }
    uuids = {t.task_id: t.task_uuid for t in player.scheduler.state.tasks.values()}
    unhandled = [t.task_id for t in player.scheduler.failed_unhandled()]
    assert (player.statuses(), ended, unhandled) == reference(blueprint, fates, uuids), player.log
