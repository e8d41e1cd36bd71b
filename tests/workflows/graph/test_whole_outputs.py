"""Offloaded answers reach conditions, data flow and loops whole: a loop over 60 large records."""

from __future__ import annotations

import pytest
from temporalio.client import Client

from contracts import GraphStatus

from .flows import by_id, edge, finished, start_graph, task, task_of

RECORDS = 60
NOTE = "n" * 300
"""Records the export answers, each with a note: about 22 KiB of JSON, past the 16 KiB inline limit, so the graph
keeps a preview and the loop, the condition and the data flow must read the whole answer (a
preview string reached them before). Each record is a task run of its own; how a graph copes with
many runs is measured by `make bench` (the 500-task fan-out), not in the test suite's time."""
CONTINUE_AFTER = 150
"""History events before the graph continues as new (4,000 outside tests): the loop's running
instances outlive a run and report to the next one, as in a loop of thousands."""
MAX_RUNNING = 40


@pytest.mark.slow(seconds=40)
async def test_a_loop_over_large_records_and_conditions_and_data_flow_see_the_whole_answer(
    client: Client, worker: None, task_queue: str
) -> None:
    records = [{"id": n, "name": f"customer {n}", "note": NOTE} for n in range(RECORDS)]
    handle = await start_graph(
        client,
        task_queue,
        {
            "new_tasks": [
                task("export", input_data={"echo": {"records": records, "last": "the end"}}),
                task(
                    "each",
                    input_data={},
                    directives={
                        "loop_directive": {
                            "type": "PARALLEL_ITERATION",
                            "iteration_input_key": "records",
                            "input_source_task_id": "export",
                            "task_template": task("touch", input_data={"op": "touch"}),
                        }
                    },
                ),
                task("count", input_data={}),
            ],
            "new_edges": [
                edge(
                    "export",
                    "count",
                    condition={"evaluator": "CEL", "expression": f"size(output.records) == {RECORDS}"},
                    data_flow={"mappings": {"last": "output.last", "tenth": "output.records[9].name"}},
                ),
            ],
        },
        max_running_tasks=MAX_RUNNING,
        cas_after=CONTINUE_AFTER,
    )
    result = await finished(handle, within=300)  # a 2-core machine under the whole suite's load
    assert result.status == GraphStatus.COMPLETED, result
    runs = [e.run_id async for e in client.list_workflows(f"WorkflowId = '{handle.id}'")]
    assert len(runs) >= 2, f"the graph continued as new while {MAX_RUNNING} instances ran"
    export = await task_of(handle, result, "export")
    assert export.versions[0].artifact is not None, "the answer was offloaded (the state keeps a preview)"
    assert isinstance(export.versions[0].output, str), "the preview is text"
    tasks = by_id(result)
    assert tasks["count"].output == {"last": "the end", "tenth": "customer 9"}
    assert tasks["each"].instances == RECORDS
    each = await task_of(handle, result, "each")
    assert [i.item for i in each.versions[0].instances] == records


async def test_a_loop_whose_instances_answer_large_is_read_whole_by_what_follows(
    client: Client, worker: None, task_queue: str
) -> None:
    """Each instance echoes an item past the inline limit (16 KiB): its answer is offloaded and
    the loop's output keeps previews, yet the condition and data flow after the loop see every
    instance's whole answer."""
    pages = [f"page {n}: " + "x" * 20_000 + f" end of page {n}" for n in range(3)]
    handle = await start_graph(
        client,
        task_queue,
        {
            "new_tasks": [
                task("pages", input_data={"echo": pages}),
                task(
                    "each",
                    input_data={},
                    directives={
                        "loop_directive": {
                            "type": "PARALLEL_ITERATION",
                            "iteration_input_key": "echo",
                            "input_source_task_id": "pages",
                            "task_template": task("copy", input_data={}),
                        }
                    },
                ),
                task("report", input_data={}),
            ],
            "new_edges": [
                edge("pages", "each"),
                edge(
                    "each",
                    "report",
                    condition={
                        "evaluator": "CEL",
                        "expression": "size(output) == 3 && size(output[2]) > 20000",
                    },
                    data_flow={"mappings": {"last": "output[2]", "first": "output[0]"}},
                ),
            ],
        },
    )
    result = await finished(handle, within=120)
    assert result.status == GraphStatus.COMPLETED, result
    each = await task_of(handle, result, "each")
    instances = each.versions[0].instances
    assert all(i.artifact is not None for i in instances), "every instance's answer was offloaded"
    assert all(isinstance(i.output, str) and len(i.output) < 20_000 for i in instances), (
        "the state keeps previews"
    )
    report = await task_of(handle, result, "report")
    assert report.versions, (report.status, report.reason, result.edges)
    assert report.versions[0].input_data == {"last": pages[2], "first": pages[0]}
