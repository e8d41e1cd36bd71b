"""Graph fan-out: one graph of N independent tasks vs N bare children of a bare parent.

Synapse (timed from the request): `POST /graphs` with N tasks for `Agent:demo` and no edges, so
every task is ready at once and starts in one workflow task (within the running cap), each as an
`AgentTaskWorkflow` child that runs one agent step and reports back; until the graph's result.
Bare, alternating: a parent that starts N children (each runs one activity) with `asyncio.gather`
in one workflow task and waits for every result. Rows: wall time, the parent's history events
(its largest run, and how many runs: the graph continues-as-new when history grows), and CPU per
task (this process, which runs the workers and the API, plus the dev server).
"""

from __future__ import annotations

import time
from typing import Any

from temporalio.client import Client

from contracts import GraphView
from workflows.identity.ids import graph_workflow_id

from .bare import BareFanOut
from .harness import Harness, Stack, cpu_seconds
from .stats import Measure, Result, Row, progress

GRAPH_WITHIN = 600.0
"""Seconds one fan-out may take before the benchmark gives up."""


async def _runs(client: Client, workflow_id: str) -> list[int]:
    """Events in each run of a workflow (continue-as-new makes several)."""
    counts = []
    async for execution in client.list_workflows(f"WorkflowId = '{workflow_id}'"):
        history = await client.get_workflow_handle(workflow_id, run_id=execution.run_id).fetch_history()
        counts.append(len(history.events))
    return counts


async def _synapse(stack: Stack, tasks: int) -> tuple[float, list[int]]:
    blueprint: dict[str, Any] = {
        "new_tasks": [
            {"task_id": f"t{i}", "assignee_id": "Agent:demo", "input_data": {"echo": i}} for i in range(tasks)
        ]
    }
    started = time.perf_counter()
    created = await stack.synapse.submit_graph(blueprint)
    workflow_id = graph_workflow_id(created.graph_id)
    result = await stack.synapse_client.get_workflow_handle(workflow_id, result_type=GraphView).result()
    elapsed = time.perf_counter() - started
    assert result.counts == {"completed": tasks}, result.counts
    return elapsed, await _runs(stack.synapse_client, workflow_id)


async def _bare(stack: Stack, tasks: int) -> tuple[float, list[int]]:
    workflow_id = stack.key("bare-fanout")
    started = time.perf_counter()
    handle = await stack.client.start_workflow(
        BareFanOut.run, tasks, id=workflow_id, task_queue=stack.bare_queue
    )
    assert await handle.result() == tasks
    return time.perf_counter() - started, await _runs(stack.client, workflow_id)


async def run(harness: Harness, *, tasks: int, samples: int) -> Result:
    """Measure `samples` fan-outs of `tasks` tasks on each side, alternating."""
    wall = {"synapse": Measure(), "bare": Measure()}
    events = {"synapse": Measure(), "bare": Measure()}
    runs = {"synapse": Measure(), "bare": Measure()}
    cpu = {"synapse": Measure(), "bare": Measure()}
    async with harness.stack("graph") as stack:
        sides = {"synapse": _synapse, "bare": _bare}
        for sample in range(samples + 1):  # the first round warms both sides up
            for side, fan_out in sides.items():
                before = cpu_seconds() + cpu_seconds(harness.server_pid)
                seconds, per_run = await fan_out(stack, tasks)
                used = cpu_seconds() + cpu_seconds(harness.server_pid) - before
                progress(f"graph: {side} fan-out of {tasks} in {seconds:.1f} s, runs {per_run}")
                if sample == 0:
                    continue
                wall[side].values.append(seconds)
                events[side].values.append(max(per_run))
                runs[side].values.append(len(per_run))
                cpu[side].values.append(used * 1000 / tasks)
    return Result(
        rows=[
            Row(
                f"graph: {tasks}-task fan-out, wall time",
                "s",
                wall["synapse"],
                wall["bare"],
                "POST /graphs until the graph's result (every task an agent-step child that reports "
                "back); bare: a parent starts N one-activity children in one task and awaits them",
            ),
            Row(
                f"graph: parent history events (largest run of {one_value(runs['synapse'])})",
                "events",
                events["synapse"],
                events["bare"],
                "the most events in any run of the parent (the graph continues-as-new as history grows)",
            ),
            Row(
                "graph: CPU per task",
                "ms",
                cpu["synapse"],
                cpu["bare"],
                "CPU of this process (workers, API, client) + the dev server, per task",
            ),
        ]
    )


def one_value(measure: Measure) -> str:
    """A count for a row name: its median, as a whole number."""
    return f"{measure.p50:.0f}" if measure.p50 is not None else "?"
