"""Starts within Temporal's limits: wide fan-outs and loops of large inputs complete, and no
workflow task of the graph carries more payload bytes than its budget.

Before, every ready run started in one workflow task: 300 starts of 14 KB each passed gRPC's
4 MiB message limit and Temporal terminated the graph within a second.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client

from contracts import GraphStatus
from workflows.graph.budget import TASK_PAYLOAD_BUDGET

from .flows import GraphHandle, edge, finished, start_graph, task, task_of, view_of

KIB = 1024
INLINE = 16 * KIB
"""SYNAPSE_INLINE_BYTES' default: what the API gives new graphs."""


async def carried_per_task(client: Client, handle: GraphHandle) -> list[int]:
    """Payload bytes of the starts and signals each workflow task of the graph issued (every run)."""
    per_task: dict[tuple[str, int], int] = defaultdict(int)
    async for run in client.list_workflows(f"WorkflowId = '{handle.id}'"):
        async for event in client.get_workflow_handle(handle.id, run_id=run.run_id).fetch_history_events():
            if event.event_type == EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED:
                started = event.start_child_workflow_execution_initiated_event_attributes
                key, payloads = (run.run_id, started.workflow_task_completed_event_id), started.input
            elif event.event_type == EventType.EVENT_TYPE_SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_INITIATED:
                signalled = event.signal_external_workflow_execution_initiated_event_attributes
                key, payloads = (run.run_id, signalled.workflow_task_completed_event_id), signalled.input
            else:
                continue
            per_task[key] += sum(p.ByteSize() for p in payloads.payloads)
    return list(per_task.values())


def fan_out(width: int, blob: str) -> dict[str, Any]:
    """A root whose answer (`blob`) flows into each of `width` tasks."""
    return {
        "new_tasks": [
            task("root", input_data={"echo": {"blob": blob}}),
            *(task(f"t{n}") for n in range(width)),
        ],
        "new_edges": [
            edge("root", f"t{n}", data_flow={"mappings": {"blob": "output.blob"}}) for n in range(width)
        ],
    }


def loop_of(instances: int, template_input: dict[str, Any]) -> dict[str, Any]:
    """A loop of `instances` runs over a list, each given the template's (large) input."""
    return {
        "new_tasks": [
            task("items", input_data={"echo": {"items": list(range(instances))}}),
            task(
                "each",
                input_data={},
                directives={
                    "loop_directive": {
                        "type": "PARALLEL_ITERATION",
                        "iteration_input_key": "items",
                        "input_source_task_id": "items",
                        "task_template": task("one", input_data=template_input),
                    }
                },
            ),
        ],
        "new_edges": [],
    }


@pytest.mark.slow(seconds=120)
async def test_a_300_wide_fan_out_of_a_14_kb_answer_completes_within_the_budget(
    client: Client, worker: None, task_queue: str
) -> None:
    blob = "x" * 14_000
    handle = await start_graph(client, task_queue, fan_out(300, blob))
    result = await finished(handle, within=600)  # 300 runs on a 2-core machine shared with others
    assert result.status == GraphStatus.COMPLETED, result.reason
    every = await view_of(handle)
    assert sorted({t.status.value for t in every.tasks}) == ["completed"] and len(every.tasks) == 301
    last = await task_of(handle, every, "t299")
    assert last.versions[0].input_data["blob"] == blob, "each task got the root's whole answer"
    carried = await carried_per_task(client, handle)
    assert max(carried) <= TASK_PAYLOAD_BUDGET, f"a workflow task carried {max(carried):,} bytes"
    assert sum(carried) > 300 * 14_000, "the starts carried the answer (not by reference: it is under 16 KiB)"
    assert len(carried) >= 4, "4.2 MB of starts took several workflow tasks"


@pytest.mark.slow(seconds=60)
@pytest.mark.parametrize("inline", [None, INLINE], ids=["carried-whole", "by-reference"])
async def test_a_25_instance_loop_of_a_200_kb_template_input_completes(
    client: Client, worker: None, task_queue: str, inline: int | None
) -> None:
    """Carried whole (a graph of before), the starts go a few per workflow task; over the inline
    size (SYNAPSE_INLINE_BYTES), each start carries a reference and the run reads its input back."""
    page = "p" * 200_000
    handle = await start_graph(client, task_queue, loop_of(25, {"page": page}), inline_input_bytes=inline)
    result = await finished(handle, within=300)
    assert result.status == GraphStatus.COMPLETED, result.reason
    each = await task_of(handle, result, "each")
    instances = each.versions[0].instances
    assert len(instances) == 25
    sizes = [instance.artifact.size_bytes if instance.artifact else 0 for instance in instances]
    assert min(sizes) > 200_000, f"every agent was given the whole page (it echoes it): {sizes}"
    carried = await carried_per_task(client, handle)
    assert max(carried) <= TASK_PAYLOAD_BUDGET, f"a workflow task carried {max(carried):,} bytes"
    if inline is None:
        assert sum(carried) > 25 * 200_000 and len(carried) >= 5, "5 MB of starts, a few per task"
    else:
        assert sum(carried) < 25 * INLINE, "the starts carried references, not the page"
