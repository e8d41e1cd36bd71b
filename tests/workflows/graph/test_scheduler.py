"""The graph's rules without Temporal: which tasks run, skip, fail, follow a GOTO, and how loops start."""

from __future__ import annotations

from typing import Any

from contracts import EdgeStatus, TaskReport, TaskStatus
from workflows.graph.rules import Scheduler
from workflows.graph.rules.progress import Progress, Run

from .script import build as graph
from .test_blueprint import edge, task


def status(scheduler: Scheduler) -> dict[str, str]:
    return {t.task_id: t.status.value for t in scheduler.state.tasks.values()}


def local(scheduler: Scheduler, runs: list[Run]) -> list[str]:
    return [
        scheduler.state.tasks[run.task_uuid].task_id
        + (f"#{run.instance}" if run.instance is not None else "")
        for run in runs
    ]


def finish(
    scheduler: Scheduler,
    task_id: str,
    output: Any = None,
    *,
    failed: str | None = None,
    instance: int | None = None,
) -> None:
    found = scheduler.task_by_local(task_id)
    assert found is not None
    report = TaskReport(
        task_uuid=found.task_uuid,
        version=found.versions[-1].version,
        instance=instance,
        status="failed" if failed else "completed",
        output=output,
        error=failed,
    )
    assert scheduler.record(report, Progress()) is not None


def test_a_diamond_runs_in_waves_and_data_flows() -> None:
    s = graph(
        {
            "new_tasks": [task("a"), task("b"), task("c"), task("d")],
            "new_edges": [
                edge("a", "b", data_flow={"mappings": {"n": "output.n"}}),
                edge("a", "c"),
                edge("b", "d"),
                edge("c", "d"),
            ],
        }
    )
    assert local(s, s.advance().runs) == ["a"]
    finish(s, "a", {"n": 41})
    assert local(s, s.advance().runs) == ["b", "c"]
    b = s.task_by_local("b")
    assert b is not None and b.versions[0].input_data == {"echo": "b", "n": 41}
    finish(s, "b", "B")
    assert s.advance().runs == []
    finish(s, "c", "C")
    assert local(s, s.advance().runs) == ["d"]
    finish(s, "d", "D")
    s.advance()
    assert s.finished() and not s.failed_unhandled()


def test_a_false_condition_skips_what_only_it_feeds_and_a_join_still_runs() -> None:
    s = graph(
        {
            "new_tasks": [task("a"), task("yes"), task("no"), task("after_no"), task("join")],
            "new_edges": [
                edge("a", "yes", condition={"evaluator": "CEL", "expression": "output.ok"}),
                edge("a", "no", condition={"evaluator": "CEL", "expression": "!output.ok"}),
                edge("no", "after_no"),
                edge("yes", "join"),
                edge("no", "join"),
            ],
        }
    )
    s.advance()
    finish(s, "a", {"ok": True})
    assert local(s, s.advance().runs) == ["yes"]
    assert status(s)["no"] == "skipped" and status(s)["after_no"] == "skipped"
    finish(s, "yes", 1)
    assert local(s, s.advance().runs) == ["join"]


def test_a_condition_error_is_shown_on_the_edge_and_fails_the_target() -> None:
    s = graph(
        {
            "new_tasks": [task("a"), task("b")],
            "new_edges": [edge("a", "b", condition={"evaluator": "CEL", "expression": "output.score > 1"})],
        }
    )
    s.advance()
    finish(s, "a", {"other": 1})
    s.advance()
    assert s.state.edges[0].status == EdgeStatus.ERROR and "no such member" in (s.state.edges[0].error or "")
    b = s.task_by_local("b")
    assert b is not None and b.status == TaskStatus.FAILED and "edge a → b" in (b.reason or "")
    assert s.finished() and s.failed_unhandled() == [b]


def test_a_failure_continues_at_its_goto_target_with_the_error() -> None:
    s = graph(
        {
            "new_tasks": [
                task("risky", directives={"on_failure": {"type": "GOTO", "target_task_id": "fallback"}}),
                task("fallback"),
                task("next"),
            ],
            "new_edges": [edge("risky", "next")],
        }
    )
    assert local(s, s.advance().runs) == ["risky"], "a GOTO target waits for a failure"
    finish(s, "risky", failed="boom")
    assert local(s, s.advance().runs) == ["fallback"]
    fallback = s.task_by_local("fallback")
    assert fallback is not None and fallback.versions[0].input_data["failure"]["error"] == "boom"
    assert status(s)["next"] == "skipped"
    finish(s, "fallback", "recovered")
    s.advance()
    assert s.finished() and s.failed_unhandled() == []


def test_loops_start_in_parallel_within_the_cap_or_one_by_one() -> None:
    def looped(kind: str) -> dict[str, Any]:
        directive = {
            "type": kind,
            "iteration_input_key": "item",
            "input_source_task_id": "list",
            "task_template": task("each"),
            "max_iterations": 3,
        }
        return {"new_tasks": [task("list"), task("loop", directives={"loop_directive": directive})]}

    parallel = graph(looped("PARALLEL_ITERATION"), max_running=2)
    parallel.advance()
    finish(parallel, "list", {"item": [10, 20, 30, 40]})
    assert local(parallel, parallel.advance().runs) == ["loop#0", "loop#1"], "capped at 2 running"
    finish(parallel, "loop", "r1", instance=1)
    assert local(parallel, parallel.advance().runs) == ["loop#2"], "max_iterations=3 drops the 4th item"
    finish(parallel, "loop", "r0", instance=0)
    finish(parallel, "loop", "r2", instance=2)
    parallel.advance()
    loop = parallel.task_by_local("loop")
    assert (
        loop is not None
        and loop.status == TaskStatus.COMPLETED
        and loop.versions[0].output == ["r0", "r1", "r2"]
    )

    serial = graph(looped("SERIAL_ITERATION"))
    serial.advance()
    finish(serial, "list", [1, 2])
    assert local(serial, serial.advance().runs) == ["loop#0"]
    finish(serial, "loop", "x", instance=0)
    assert local(serial, serial.advance().runs) == ["loop#1"]
