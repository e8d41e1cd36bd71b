"""The graph's rules, one row each, on the pure scheduler: what a person sees asked and run.

Each row plays a script (see `script.py`) on a small blueprint and checks the log of gates asked
and runs started, where the tasks ended, the input runs are given, and that a gate is open exactly
for what waits at one. A row may end with a step that is refused: it raises the workflow's typed
error and changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest
from temporalio.exceptions import ApplicationError

from contracts import ErrorType, GraphConfig
from workflows.graph.rules.progress import Run
from workflows.graph.run_inputs import run_input

from .script import Player, build, play
from .test_blueprint import edge, task


@dataclass(frozen=True)
class Row:
    """One rule: a script on a blueprint, and what a person sees."""

    name: str
    blueprint: dict[str, Any]
    steps: list[tuple[Any, ...]]
    log: list[str]
    """Gates asked and runs started, in order."""
    statuses: dict[str, str]
    """Where these tasks are at the end."""
    inputs: dict[str, dict[str, Any]] = field(default_factory=dict)
    """The input the current run of a task (`a`) or loop instance (`loop#1`) is given."""
    refused: tuple[tuple[Any, ...], ErrorType] | None = None
    """A last step, refused with this error, leaving everything as it was."""
    max_running: int = 100


def gated(task_id: str, **extra: Any) -> dict[str, Any]:
    return task(task_id, directives={"human_interaction": {"prompt": f"Run {task_id}?"}}, **extra)


def goto(task_id: str, target: str, gate: bool = False, **failure: Any) -> dict[str, Any]:
    directives: dict[str, Any] = {"on_failure": {"type": "GOTO", "target_task_id": target, **failure}}
    if gate:
        directives["human_interaction"] = {"prompt": f"Run {task_id}?"}
    return task(task_id, directives=directives)


def looped(template: dict[str, Any], kind: str = "PARALLEL_ITERATION", **loop: Any) -> dict[str, Any]:
    return task(
        "loop",
        input_data={"shared": "from the loop"},
        directives={
            "loop_directive": {
                "type": kind,
                "iteration_input_key": "item",
                "input_source_task_id": "list",
                "task_template": template,
                **loop,
            }
        },
    )


CHAIN = {"new_tasks": [task("a"), gated("b"), task("c")], "new_edges": [edge("a", "b"), edge("b", "c")]}
RETRY = {
    "new_tasks": [gated("fetch"), goto("process", "fetch", max_attempts=2), task("report")],
    "new_edges": [edge("fetch", "process"), edge("process", "report")],
}
JOIN = {
    "new_tasks": [task("a"), task("b"), task("join")],
    "new_edges": [edge("a", "join"), edge("b", "join")],
}
IF_ELSE = {
    "new_tasks": [task("a"), task("yes"), task("no"), task("join")],
    "new_edges": [
        edge("a", "yes", condition={"evaluator": "CEL", "expression": "output.ok"}),
        edge("a", "no", condition={"evaluator": "CEL", "expression": "!output.ok"}),
        edge("yes", "join"),
        edge("no", "join"),
    ],
}
LOOP_FLOW = {
    "new_tasks": [
        task("list"),
        task("config"),
        looped(
            task("each", input_data={"echo": "each", "kept": "template", "n": "template", "item": "template"})
        ),
    ],
    "new_edges": [
        edge("config", "loop", data_flow={"mappings": {"n": "output.n"}}),
        edge("list", "loop", data_flow={"mappings": {"first": "output[0]"}}),
    ],
}
GATED_LOOP = {
    "new_tasks": [task("list"), looped(gated("each"), "SERIAL_ITERATION"), task("after")],
    "new_edges": [edge("loop", "after")],
}

ROWS: list[Row] = [
    Row(
        "a gate asks on the first run",
        CHAIN,
        [("done", "a"), ("yes", "b"), ("done", "b"), ("done", "c")],
        ["run a v1", "ask b", "run b v1", "run c v1"],
        {"a": "completed", "b": "completed", "c": "completed"},
    ),
    Row(
        "a gate asks again on a rollback's re-run, of the task and of a gated task downstream",
        CHAIN,
        [("done", "a"), ("yes", "b"), ("done", "b"), ("done", "c"), ("rollback", "a"), ("done", "a")],
        ["run a v1", "ask b", "run b v1", "run c v1", "run a v2", "ask b"],
        {"a": "completed", "b": "waiting", "c": "pending"},
    ),
    Row(
        "a rollback of the gated task itself asks before it runs",
        CHAIN,
        [("done", "a"), ("yes", "b"), ("done", "b"), ("rollback", "b")],
        ["run a v1", "ask b", "run b v1", "run c v1", "ask b"],
        {"b": "waiting", "c": "pending"},
    ),
    Row(
        "a denied gate on a rollback skips the task and what only it feeds",
        CHAIN,
        [("done", "a"), ("yes", "b"), ("done", "b"), ("done", "c"), ("rollback", "b"), ("no", "b")],
        ["run a v1", "ask b", "run b v1", "run c v1", "ask b"],
        {"b": "skipped", "c": "skipped"},
    ),
    Row(
        "a rolled-back task waits while its rollback holds it (runs still ending)",
        CHAIN,
        [("done", "a"), ("rollback", "a", {}, "held")],
        ["run a v1", "ask b"],
        {"a": "pending", "b": "pending"},
    ),
    Row(
        "GOTO back re-runs the gated target as a new version, asking again, then everything after it",
        RETRY,
        [("yes", "fetch"), ("done", "fetch"), ("fail", "process"), ("yes", "fetch"), ("done", "fetch")],
        ["ask fetch", "run fetch v1", "run process v1", "ask fetch", "run fetch v2", "run process v2"],
        {"fetch": "completed", "process": "running", "report": "pending"},
    ),
    Row(
        "GOTO back finishes the graph once the retry succeeds",
        RETRY,
        [
            ("yes", "fetch"),
            ("done", "fetch"),
            ("fail", "process"),
            ("yes", "fetch"),
            ("done", "fetch"),
            ("done", "process"),
            ("done", "report"),
        ],
        [
            "ask fetch",
            "run fetch v1",
            "run process v1",
            "ask fetch",
            "run fetch v2",
            "run process v2",
            "run report v1",
        ],
        {"fetch": "completed", "process": "completed", "report": "completed"},
    ),
    Row(
        "GOTO gives up after max_attempts: the task stays failed and what follows is skipped",
        RETRY,
        [
            ("yes", "fetch"),
            ("done", "fetch"),
            ("fail", "process"),
            ("yes", "fetch"),
            ("done", "fetch"),
            ("fail", "process"),
            ("yes", "fetch"),
            ("done", "fetch"),
            ("fail", "process"),
        ],
        [
            "ask fetch",
            "run fetch v1",
            "run process v1",
            "ask fetch",
            "run fetch v2",
            "run process v2",
            "ask fetch",
            "run fetch v3",
            "run process v3",
        ],
        {"fetch": "completed", "process": "failed", "report": "skipped"},
    ),
    Row(
        "a forward GOTO target asks at its gate before it runs",
        {
            "new_tasks": [goto("risky", "fallback"), gated("fallback"), task("next")],
            "new_edges": [edge("risky", "next")],
        },
        [("fail", "risky"), ("yes", "fallback"), ("done", "fallback")],
        ["run risky v1", "ask fallback", "run fallback v1"],
        {"risky": "failed", "fallback": "completed", "next": "skipped"},
    ),
    Row(
        "a join waits for both parents and runs",
        JOIN,
        [("done", "a"), ("done", "b")],
        ["run a v1", "run b v1", "run join v1"],
        {"join": "running"},
    ),
    Row(
        "a join whose parent failed (no GOTO) is skipped, naming the parent",
        JOIN,
        [("done", "a"), ("fail", "b")],
        ["run a v1", "run b v1"],
        {"a": "completed", "b": "failed", "join": "skipped"},
    ),
    Row(
        "an if/else still joins: the branch not taken does not block",
        IF_ELSE,
        [("done", "a", {"ok": True}), ("done", "yes")],
        ["run a v1", "run yes v1", "run join v1"],
        {"no": "skipped", "join": "running"},
    ),
    Row(
        "a paused task's result waits for RESUME before the tasks after it start",
        CHAIN,
        [("pause", "a"), ("done", "a")],
        ["run a v1"],
        {"a": "completed", "b": "pending"},
    ),
    Row(
        "RESUME lets the paused task's result flow on",
        CHAIN,
        [("pause", "a"), ("done", "a"), ("resume", "a")],
        ["run a v1", "ask b"],
        {"a": "completed", "b": "waiting"},
    ),
    Row(
        "an update of a task waiting at its gate asks again with the new input",
        CHAIN,
        [("done", "a"), ("update", "b", {"new_input_data": {"echo": "new"}})],
        ["run a v1", "ask b", "ask b"],
        {"b": "waiting"},
    ),
    Row(
        "an update of a task waiting at its gate: confirmed, it runs with the new input",
        CHAIN,
        [("done", "a"), ("update", "b", {"new_input_data": {"echo": "new"}}), ("yes", "b")],
        ["run a v1", "ask b", "ask b", "run b v1"],
        {"b": "running"},
        inputs={"b": {"echo": "new"}},
    ),
    Row(
        "an update of a pending task: it runs, when its turn comes, with the new input",
        CHAIN,
        [("update", "c", {"new_input_data": {"echo": "new"}}), ("done", "a"), ("yes", "b"), ("done", "b")],
        ["run a v1", "ask b", "run b v1", "run c v1"],
        {"c": "running"},
        inputs={"c": {"echo": "new"}},
    ),
    Row(
        "an update of a ready task (the running cap is reached): it runs later with the new input",
        {"new_tasks": [task("a"), task("b")]},
        [("update", "b", {"new_input_data": {"echo": "new"}}), ("done", "a")],
        ["run a v1", "run b v1"],
        {"a": "completed", "b": "running"},
        inputs={"b": {"echo": "new"}},
        max_running=1,
    ),
    Row(
        "an update of a running task is refused (409 TaskStarted: roll it back), changing nothing",
        CHAIN,
        [("done", "a"), ("yes", "b")],
        ["run a v1", "ask b", "run b v1"],
        {"b": "running"},
        inputs={"b": {"echo": "b"}},
        refused=(("update", "b", {"new_input_data": {"echo": "new"}}), ErrorType.TASK_STARTED),
    ),
    Row(
        "new_status skipped of a task that has not started: it never runs, nor what only it feeds",
        CHAIN,
        [("update", "b", {"new_status": "skipped"}), ("done", "a")],
        ["run a v1"],
        {"a": "completed", "b": "skipped", "c": "skipped"},
    ),
    Row(
        "new_status cancelled of a task waiting at its gate: the gate is withdrawn, its child skipped",
        CHAIN,
        [("done", "a"), ("update", "b", {"new_status": "cancelled"})],
        ["run a v1", "ask b"],
        {"a": "completed", "b": "cancelled", "c": "skipped"},
    ),
    Row(
        "new_status of a running task is refused (409 TaskStarted), changing nothing",
        CHAIN,
        [("done", "a"), ("yes", "b")],
        ["run a v1", "ask b", "run b v1"],
        {"b": "running", "c": "pending"},
        refused=(("update", "b", {"new_status": "skipped"}), ErrorType.TASK_STARTED),
    ),
    Row(
        "new_status of a finished task is refused (409 TaskStarted), changing nothing",
        CHAIN,
        [("done", "a")],
        ["run a v1", "ask b"],
        {"a": "completed", "b": "waiting"},
        refused=(("update", "a", {"new_status": "cancelled"}), ErrorType.TASK_STARTED),
    ),
    Row(
        "each loop instance of a gated template asks before it runs (serial: one at a time)",
        {**GATED_LOOP, "new_tasks": GATED_LOOP["new_tasks"]},
        [("done", "list", [1, 2]), ("yes", "loop#0"), ("done", "loop#0"), ("no", "loop#1")],
        ["run list v1", "ask loop#0", "run loop#0 v1", "ask loop#1", "run after v1"],
        {"loop": "completed", "after": "running"},
    ),
    Row(
        "a failed loop instance ends the loop as failed, cancelling the others",
        {"new_tasks": [task("list"), looped(task("each"))]},
        [("done", "list", [1, 2, 3]), ("fail", "loop#1")],
        ["run list v1", "run loop#0 v1", "run loop#1 v1", "run loop#2 v1"],
        {"loop": "failed"},
    ),
    Row(
        "a cancelled loop instance ends the loop too (never left running)",
        {"new_tasks": [task("list"), looped(task("each"))]},
        [("done", "list", [1, 2]), ("cancel", "loop#0")],
        ["run list v1", "run loop#0 v1", "run loop#1 v1"],
        {"loop": "failed"},
    ),
    Row(
        "data flowing into a loop task reaches every instance: template's input, then the loop's, then the item",
        LOOP_FLOW,
        [("done", "list", [1, 2]), ("done", "config", {"n": 5})],
        ["run list v1", "run config v1", "run loop#0 v1", "run loop#1 v1"],
        {"loop": "running"},
        inputs={
            "loop#0": {
                "echo": "each",
                "kept": "template",
                "n": 5,
                "shared": "from the loop",
                "first": 1,
                "item": 1,
            },
            "loop#1": {
                "echo": "each",
                "kept": "template",
                "n": 5,
                "shared": "from the loop",
                "first": 1,
                "item": 2,
            },
        },
    ),
    Row(
        "a rollback while another is in flight (held) is refused (409 RollbackInFlight), changing nothing",
        CHAIN,
        [("done", "a"), ("yes", "b"), ("done", "b"), ("rollback", "a", {}, "held")],
        ["run a v1", "ask b", "run b v1", "run c v1"],
        {"a": "pending", "b": "pending", "c": "pending"},
        refused=(("rollback", "b", {"new_input_data": {"echo": "mixed"}}), ErrorType.ROLLBACK_IN_FLIGHT),
    ),
    Row(
        "once the rollback is released its tasks go, and another rollback is accepted",
        CHAIN,
        [("done", "a"), ("rollback", "a", {}, "held"), ("release",), ("done", "a"), ("rollback", "a")],
        ["run a v1", "ask b", "run a v2", "ask b", "run a v3"],
        {"a": "running", "b": "pending"},
    ),
]


@pytest.mark.parametrize("row", ROWS, ids=[row.name for row in ROWS])
def test_rule(row: Row) -> None:
    player = Player(build(row.blueprint, row.max_running)).play(row.steps)
    if row.refused is not None:
        step, error = row.refused
        before, log = player.scheduler.state.model_dump(), list(player.log)
        with pytest.raises(ApplicationError) as refusal:
            player.step(step)
        assert refusal.value.type == error, refusal.value
        assert player.scheduler.state.model_dump() == before and player.log == log
    assert player.log == row.log
    statuses = player.statuses()
    assert {name: statuses[name] for name in row.statuses} == row.statuses
    assert {name: player.input_of(name) for name in row.inputs} == row.inputs
    assert sorted(player.gates) == player.waiting(), "a gate is open exactly for what waits at one"


def test_a_goto_back_carries_the_failure_and_the_attempt() -> None:
    player = play(RETRY, [("yes", "fetch"), ("done", "fetch"), ("fail", "process", "timeout")])
    fetch = player.task("fetch")
    assert fetch.versions[0].superseded and fetch.status.value == "waiting"
    assert fetch.next_input["failure"] == {
        "task_id": "process",
        "task_uuid": player.uuid("process"),
        "error": "timeout",
        "attempt": 1,
    }
    player.step(("yes", "fetch"))
    assert fetch.versions[1].input_data["failure"]["attempt"] == 1


def test_giving_up_names_the_target_and_the_attempts() -> None:
    steps: list[tuple[Any, ...]] = [("yes", "fetch"), ("done", "fetch"), ("fail", "process")] * 3
    player = play(RETRY, steps)
    assert player.scheduler.finished()
    [failed] = player.scheduler.failed_unhandled()
    assert failed.task_id == "process" and "GOTO 'fetch' given up after 2 attempts" in (failed.reason or "")


def test_a_join_skipped_for_a_failed_parent_says_which() -> None:
    player = play(JOIN, [("done", "a"), ("fail", "b")])
    assert player.task("join").reason == "parent 'b' failed"


def test_a_rollback_applies_new_input_over_data_flow_and_a_new_assignee() -> None:
    flow = {
        "new_tasks": [task("a"), task("b")],
        "new_edges": [edge("a", "b", data_flow={"mappings": {"n": "output.n"}})],
    }
    player = play(
        flow,
        [
            ("done", "a", {"n": 1}),
            ("done", "b"),
            ("rollback", "b", {"new_input_data": {"n": 7, "extra": True}, "new_assignee_id": "Agent:other"}),
        ],
    )
    version = player.task("b").versions[-1]
    assert version.version == 2 and version.input_data == {"echo": "b", "n": 7, "extra": True}
    assert version.assignee_id == "Agent:other"


def test_a_rolled_back_task_waits_for_an_upstream_that_re_runs() -> None:
    player = play(CHAIN, [("done", "a"), ("yes", "b"), ("done", "b"), ("rollback", "a")])
    assert player.statuses() == {"a": "running", "b": "pending", "c": "pending"}
    player.step(("done", "a", {"fresh": True}))
    assert player.statuses()["b"] == "waiting"


def test_a_rolled_back_loop_gives_every_instance_its_new_input_and_assignee() -> None:
    player = play(
        {"new_tasks": [task("list"), looped(task("each"))]},
        [
            ("done", "list", [1, 2]),
            ("done", "loop#0"),
            ("done", "loop#1"),
            ("rollback", "loop", {"new_input_data": {"shared": "changed"}, "new_assignee_id": "Agent:other"}),
        ],
    )
    version = player.task("loop").versions[-1]
    assert version.version == 2 and version.assignee_id == "Agent:other"
    child = run_input(
        "graph:g", GraphConfig(graph_id="g"), player.scheduler.state, Run(player.uuid("loop"), 2, 1), {}
    )
    assert child.input_data == {"echo": "each", "shared": "changed", "item": 2}
    assert child.agent_id == "Agent:other"


def test_priority_highest_starts_first_when_the_cap_is_reached() -> None:
    urgent = task("urgent", context_overrides={"priority": "HIGHEST"})
    player = play({"new_tasks": [task("a"), task("b"), urgent]}, [], max_running=1)
    assert player.log == ["run urgent v1"]
