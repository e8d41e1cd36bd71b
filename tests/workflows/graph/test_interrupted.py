"""A graph Temporal ended while it ran, made its last good state (`rules.interrupted`), one row per
shape of what was in motion: what completed stays; each interrupted run runs again as a new
version; each gate that waited asks again; a late report of an interrupted run changes nothing."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from contracts import Principal, TaskReport
from workflows.graph.rules.interrupted import interrupted
from workflows.graph.rules.progress import Progress

from .script import NOW, Player, play
from .test_blueprint import edge, task
from .test_rules import CHAIN, GATED_LOOP, looped


@dataclass(frozen=True)
class Row:
    """What ran before the run was terminated, and what its reopened run does first."""

    name: str
    blueprint: dict[str, Any]
    before: list[tuple[Any, ...]]
    ended: dict[str, str]
    """Where the tasks are in the last good state."""
    reopened: list[str]
    """Gates asked and runs started when the reopened run first advances."""
    then: list[tuple[Any, ...]]
    statuses: dict[str, str]
    """Where the tasks are after `then`."""
    max_running: int = 100


LIST_LOOP = {
    "new_tasks": [task("list"), looped(task("each")), task("after")],
    "new_edges": [edge("loop", "after")],
}

ROWS = [
    Row(
        "a gate that waited asks again; what completed before stays",
        CHAIN,
        [("done", "a")],
        {"a": "completed", "b": "pending", "c": "pending"},
        ["ask b"],
        [("yes", "b"), ("done", "b"), ("done", "c")],
        {"a": "completed", "b": "completed", "c": "completed"},
    ),
    Row(
        "an interrupted run runs again as its next version; its late report changes nothing",
        CHAIN,
        [],
        {"a": "pending", "b": "pending", "c": "pending"},
        ["run a v2"],
        [("done", "a")],
        {"a": "completed", "b": "waiting"},
    ),
    Row(
        "a task queued behind the running cap stays ready and starts",
        {"new_tasks": [task("a"), task("b")], "new_edges": []},
        [],
        {"a": "pending", "b": "ready"},
        ["run a v2"],
        [("done", "a"), ("done", "b")],
        {"a": "completed", "b": "completed"},
        max_running=1,
    ),
    Row(
        "a loop whose instances ran runs all of them again",
        LIST_LOOP,
        [("done", "list", [1, 2]), ("done", "loop#0")],
        {"list": "completed", "loop": "pending", "after": "pending"},
        ["run loop#0 v2", "run loop#1 v2"],
        [("done", "loop#0"), ("done", "loop#1")],
        {"loop": "completed", "after": "running"},
    ),
    Row(
        "a loop instance waiting at its gate asks again in the loop's next version",
        GATED_LOOP,
        [("done", "list", [1, 2])],
        {"list": "completed", "loop": "pending", "after": "pending"},
        ["ask loop#0"],
        [("yes", "loop#0"), ("done", "loop#0")],
        {"loop": "running"},
    ),
]


@pytest.mark.parametrize("row", ROWS, ids=[row.name for row in ROWS])
def test_a_reopened_graph_goes_on_from_its_last_good_state(row: Row) -> None:
    player = play(row.blueprint, row.before, max_running=row.max_running)
    state = player.scheduler.state
    open_gates = set(player.gates.values())
    was_running = [t for t in state.tasks.values() if t.status == "running"]
    started = _started(player)

    runs = interrupted(state, "terminated", "its workflow was terminated (by alice: stuck)", NOW)

    assert sorted(runs) == started, "every run in flight is to be cancelled"
    assert player.statuses() | row.ended == player.statuses(), "the last good state"
    assert (state.status, state.reason, state.finished_at) == (
        "terminated",
        "its workflow was terminated (by alice: stuck)",
        NOW,
    )
    assert set(state.decided) == open_gates, "each gate that waited is withdrawn"
    assert all(outcome.decided_by == Principal.ENDED for outcome in state.decided.values())
    reopened = Player(player.scheduler).play([])
    assert reopened.log == row.reopened
    for old in was_running:  # a report of a run that was interrupted arrives late
        late = TaskReport(task_uuid=old.task_uuid, version=1, status="completed", output="late")
        assert reopened.scheduler.record(late, Progress()) is None, old.task_id
    for step in row.then:
        reopened.step(step)
    assert reopened.statuses() | row.statuses == reopened.statuses()


def _started(player: Player) -> list[str]:
    """Give each run in flight its workflow id, as the workflow does when it starts one; the ids."""
    for name in player.running:
        task_id, _, index = name.partition("#")
        version = player.task(task_id).versions[-1]
        run = version.instances[int(index)] if index else version
        run.workflow_id = f"run-{name}"
    return sorted(f"run-{name}" for name in player.running)
