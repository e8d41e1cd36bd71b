"""A graph that continues as new while its runs end loses none of their reports.

At continue-as-new the graph tells its running task runs to signal their reports to its next run
(`report_to_graph`). A run that ends just before it is told never signals: its report reaches the
graph run that started it only as its child's completion, which Temporal may record after the
failed signal. That run waits for it; before, the next run waited for ever for a task that had
ended (a 25-instance loop that never finished, one run in ten under load).
"""

from __future__ import annotations

import asyncio

from temporalio.api.enums.v1 import EventType
from temporalio.client import Client

from contracts import GraphStatus
from contracts.names import REPORT_TO_GRAPH

from .flows import GraphHandle, finished, start_graph, task

WIDTH = 60
ROUNDS = 5
"""Pairs of graphs run until one told a run after its end (the timing decides; most first rounds do)."""


async def told_after_their_end(client: Client, handle: GraphHandle) -> int:
    """Hand-over signals that found their run ended, over every run of the graph."""
    told: dict[tuple[str, int], str] = {}
    failed = 0
    async for run in client.list_workflows(f"WorkflowId = '{handle.id}'"):
        async for event in client.get_workflow_handle(handle.id, run_id=run.run_id).fetch_history_events():
            if event.event_type == EventType.EVENT_TYPE_SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_INITIATED:
                told[(run.run_id, event.event_id)] = (
                    event.signal_external_workflow_execution_initiated_event_attributes.signal_name
                )
            elif event.event_type == EventType.EVENT_TYPE_SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_FAILED:
                initiated = (
                    event.signal_external_workflow_execution_failed_event_attributes.initiated_event_id
                )
                failed += told.get((run.run_id, initiated)) == REPORT_TO_GRAPH
    return failed


async def test_continue_as_new_while_many_runs_end_loses_no_report(
    client: Client, worker: None, task_queue: str
) -> None:
    async def run(cas_after: int) -> int:
        handle = await start_graph(
            client,
            task_queue,
            {
                "new_tasks": [
                    task(f"t{n}", input_data={"echo": n, "sleep_seconds": (n % 10) / 20})
                    for n in range(WIDTH)
                ]
            },
            cas_after=cas_after,  # runs end throughout, some as they are told
        )
        result = await finished(handle, within=120)
        assert result.status == GraphStatus.COMPLETED, result.reason
        assert result.counts == {"completed": WIDTH}
        return await told_after_their_end(client, handle)

    told_too_late = 0
    for _ in range(ROUNDS):  # each round's graphs must complete; rounds until the case happened
        told_too_late += sum(await asyncio.gather(run(30), run(41)))  # hand-overs at different points
        if told_too_late:
            break
    assert told_too_late, f"in {ROUNDS} rounds no run had ended when told to report (the case this is about)"
