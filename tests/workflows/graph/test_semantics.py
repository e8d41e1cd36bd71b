"""Graph semantics on a real dev server with the demo agents: waves and data flow, branches and a
run-time condition error, loops, GOTO on failure, timeouts."""

from __future__ import annotations

from temporalio.client import Client

from contracts import (
    EdgeStatus,
    GraphStatus,
)

from .flows import (
    by_id,
    edge,
    finished,
    start_graph,
    statuses,
    task,
)


async def test_a_diamond_runs_in_waves_and_data_flows_into_the_join(
    client: Client, worker: None, task_queue: str
) -> None:
    handle = await start_graph(
        client,
        task_queue,
        {
            "new_tasks": [
                task("fetch", input_data={"echo": {"orders": [1, 2, 3], "region": "eu"}}),
                task("count", input_data={}),
                task("label", input_data={"prefix": "region"}),
                task("report", input_data={}),
            ],
            "new_edges": [
                edge("fetch", "count", data_flow={"mappings": {"orders": "output.orders"}}),
                edge("fetch", "label", data_flow={"mappings": {"value": "output.region"}}),
                edge("count", "report", data_flow={"mappings": {"counted": "output.orders"}}),
                edge("label", "report", data_flow={"mappings": {"where": "output.value"}}),
            ],
        },
    )
    result = await finished(handle)
    assert result.status == GraphStatus.COMPLETED, result
    tasks = by_id(result)
    assert tasks["count"].output == {"orders": [1, 2, 3]}
    assert tasks["label"].output == {"prefix": "region", "value": "eu"}
    assert tasks["report"].output == {"counted": [1, 2, 3], "where": "eu"}
    assert result.outputs == {"report": {"counted": [1, 2, 3], "where": "eu"}}
    assert tasks["count"].started_at is not None and tasks["fetch"].finished_at is not None
    assert tasks["count"].started_at >= tasks["fetch"].finished_at, "a task starts after its source"
    assert all(e.status == EdgeStatus.TAKEN for e in result.edges)


async def test_conditions_choose_a_branch_and_a_run_time_error_stays_on_its_edge(
    client: Client, worker: None, task_queue: str
) -> None:
    handle = await start_graph(
        client,
        task_queue,
        {
            "new_tasks": [
                task("score", input_data={"echo": {"score": 0.8}}),
                task("approve"),
                task("reject"),
                task("notify_reject"),
                task("broken"),
            ],
            "new_edges": [
                edge("score", "approve", condition={"evaluator": "CEL", "expression": "output.score >= 0.5"}),
                edge("score", "reject", condition={"evaluator": "CEL", "expression": "output.score < 0.5"}),
                edge("reject", "notify_reject"),
                edge("score", "broken", condition={"evaluator": "CEL", "expression": "output.missing > 1"}),
            ],
        },
    )
    result = await finished(handle)
    assert statuses(result) == {
        "score": "completed",
        "approve": "completed",
        "reject": "skipped",
        "notify_reject": "skipped",
        "broken": "failed",
    }
    broken_edge = next(e for e in result.edges if e.target_task_id == "broken")
    assert broken_edge.status == EdgeStatus.ERROR and "no such member" in (broken_edge.error or "")
    assert "edge score → broken: condition 'output.missing > 1' failed" in (
        by_id(result)["broken"].reason or ""
    )
    assert result.status == GraphStatus.FAILED and "broken" in (result.reason or "")


async def test_a_parallel_loop_over_50_items_and_a_serial_one_capped(
    client: Client, worker: None, task_queue: str
) -> None:
    def loop(kind: str, max_iterations: int | None = None) -> dict[str, object]:
        return {
            "loop_directive": {
                "type": kind,
                "iteration_input_key": "n",
                "input_source_task_id": "numbers",
                "task_template": task("square", input_data={"op": "square"}),
                "max_iterations": max_iterations,
            }
        }

    handle = await start_graph(
        client,
        task_queue,
        {
            "new_tasks": [
                task("numbers", input_data={"echo": {"n": list(range(50))}}),
                task("each", input_data={}, directives=loop("PARALLEL_ITERATION")),
                task("first_three", input_data={}, directives=loop("SERIAL_ITERATION", 3)),
            ],
        },
    )
    result = await finished(handle)
    assert result.status == GraphStatus.COMPLETED, result
    tasks = by_id(result)
    assert tasks["each"].instances == 50
    assert tasks["each"].output == [{"op": "square", "n": n} for n in range(50)], "outputs in item order"
    assert tasks["first_three"].output == [{"op": "square", "n": n} for n in range(3)]


async def test_a_failure_goes_to_its_goto_target_and_a_timeout_fails_the_task(
    client: Client, worker: None, task_queue: str
) -> None:
    handle = await start_graph(
        client,
        task_queue,
        {
            "new_tasks": [
                task(
                    "charge",
                    input_data={"fail": "card declined"},
                    directives={"on_failure": {"type": "GOTO", "target_task_id": "refund"}},
                ),
                task("ship"),
                task("refund", input_data={"echo": "refunded"}),
                task("slow", input_data={"sleep_seconds": 30}, directives={"timeout_seconds": 1}),
                task("unused_fallback"),
            ],
            "new_edges": [edge("charge", "ship")],
        },
    )
    result = await finished(handle)
    tasks = by_id(result)
    assert tasks["charge"].status == "failed" and "continued at 'refund'" in (tasks["charge"].reason or "")
    assert tasks["ship"].status == "skipped"
    assert tasks["refund"].status == "completed" and tasks["refund"].output == "refunded"
    assert tasks["slow"].status == "failed" and "timed out after 1 s" in (tasks["slow"].reason or "")
    assert tasks["unused_fallback"].status == "completed", "not a GOTO target: it runs like any task"
    assert result.status == GraphStatus.FAILED and result.reason and "slow" in result.reason
    assert "charge" not in result.reason, "a failure taken up by a GOTO does not fail the graph"
