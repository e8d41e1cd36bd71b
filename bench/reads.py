"""Status reads during a wide fan-out vs the same reads on an idle graph, a rollback during one,
and the bare twin of each.

Synapse: `GET /graphs/{id}` (a query of the graph's workflow, through the API), one after the
other, timed from the request, while a graph of N independent `Agent:demo` tasks starts and runs
every one, until it ends; then as many reads of an idle graph (one task waiting at its gate).
Bare: the `progress` query of a `BareFanOut` parent while it starts and awaits N one-activity
children, then the `ready` query of an idle `BareUpdates` workflow. A query waits for the
workflow's pending workflow task, so a graph whose next task waits behind its own children's
starts answers late (issue 48: 10 s, then 503).

Rollback: `ROLLBACK_AND_MODIFY` of the root of a root → N fan-out once its tasks run (its answer
waits until the graph took it: every run in flight is cancelled and the root runs again), timed
from the request; bare: an update of a `BareFanOut` parent while it starts and awaits N children.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from contracts import GraphView
from workflows.identity.ids import graph_workflow_id

from .bare import BareFanOut, BareUpdates
from .harness import Harness, Stack
from .stats import Measure, Result, Row, progress

FANOUT_WITHIN = 600.0
"""Seconds one fan-out may take before the benchmark gives up."""
ROLLBACK_WIDTH = 100
"""Tasks behind the root that a rollback takes back (issue 48: a 100-wide one answered after 20 s)."""
IDLE_READS = (20, 300)
"""Reads of the idle graph: as many as during the fan-outs, within these bounds."""


async def _timed(read: Any) -> float:
    started = time.perf_counter()
    await read()
    return time.perf_counter() - started


async def _synapse_reads(
    stack: Stack, graph_id: str, until: asyncio.Future[Any], into: Measure, refused: list[str]
) -> None:
    """Read the graph one request after the other until `until` is done; what was not a 200 goes
    to `refused`."""
    while not until.done():
        started = time.perf_counter()
        got = await stack.synapse.http.get(f"/graphs/{graph_id}", params={"limit": 1})
        into.values.append((time.perf_counter() - started) * 1000)
        if got.status_code != 200:
            refused.append(f"{got.status_code} {got.text}")


async def _synapse_fan_out(stack: Stack, tasks: int, during: Measure, refused: list[str]) -> None:
    blueprint = {
        "new_tasks": [
            {"task_id": f"t{i}", "assignee_id": "Agent:demo", "input_data": {"echo": i}} for i in range(tasks)
        ]
    }
    created = await stack.synapse.submit_graph(blueprint)
    handle = stack.synapse_client.get_workflow_handle(
        graph_workflow_id(created.graph_id), result_type=GraphView
    )
    result = asyncio.ensure_future(handle.result())
    await _synapse_reads(stack, created.graph_id, result, during, refused)
    view = await asyncio.wait_for(result, FANOUT_WITHIN)
    assert view.counts == {"completed": tasks}, view.counts


async def _synapse_idle(stack: Stack, reads: int, idle: Measure) -> None:
    gate = {"human_interaction": {"prompt": "Run hold?"}}
    hold = {"task_id": "hold", "assignee_id": "Agent:demo", "input_data": {"echo": 1}, "directives": gate}
    blueprint = {"new_tasks": [hold]}
    created = await stack.synapse.submit_graph(blueprint)
    for _ in range(reads):
        idle.values.append(await _timed(lambda: stack.synapse.graph(created.graph_id, limit=1)) * 1000)
    await stack.synapse_client.get_workflow_handle(graph_workflow_id(created.graph_id)).terminate()


async def _synapse_rollback(stack: Stack, into: Measure) -> None:
    root = {"task_id": "root", "assignee_id": "Agent:demo", "input_data": {"echo": 0}}
    fan = [{"task_id": f"w{i}", "assignee_id": "Agent:demo", "input_data": {}} for i in range(ROLLBACK_WIDTH)]
    edges = [{"source_task_id": "root", "target_task_id": f"w{i}"} for i in range(ROLLBACK_WIDTH)]
    created = await stack.synapse.submit_graph({"new_tasks": [root, *fan], "new_edges": edges})
    deadline = time.monotonic() + FANOUT_WITHIN
    while not (await stack.synapse.graph(created.graph_id, limit=1)).counts.get("running"):
        if time.monotonic() > deadline:
            raise TimeoutError(f"the {ROLLBACK_WIDTH}-wide fan-out never ran")
        await asyncio.sleep(0.02)
    rollback = {
        "intervention_type": "ROLLBACK_AND_MODIFY",
        "target_task_id": created.tasks["root"],
        "new_input_data": {"echo": 1},
        "comment": "benchmark",
    }
    into.values.append(await _timed(lambda: stack.synapse.intervene(created.graph_id, rollback)) * 1000)
    handle = stack.synapse_client.get_workflow_handle(
        graph_workflow_id(created.graph_id), result_type=GraphView
    )
    view = await asyncio.wait_for(handle.result(), FANOUT_WITHIN)
    assert view.counts == {"completed": ROLLBACK_WIDTH + 1}, view.counts


async def _bare_rollback(stack: Stack, into: Measure) -> None:
    handle = await stack.client.start_workflow(
        BareFanOut.run, ROLLBACK_WIDTH, id=stack.key("bare-poke"), task_queue=stack.bare_queue
    )
    into.values.append(await _timed(lambda: handle.execute_update(BareFanOut.poke)) * 1000)
    assert await asyncio.wait_for(handle.result(), FANOUT_WITHIN) == ROLLBACK_WIDTH


async def _bare_fan_out(stack: Stack, tasks: int, during: Measure) -> None:
    handle = await stack.client.start_workflow(
        BareFanOut.run, tasks, id=stack.key("bare-reads"), task_queue=stack.bare_queue
    )
    result = asyncio.ensure_future(handle.result())
    while not result.done():
        during.values.append(await _timed(lambda: handle.query(BareFanOut.progress)) * 1000)
    assert await asyncio.wait_for(result, FANOUT_WITHIN) == tasks


async def _bare_idle(stack: Stack, reads: int, idle: Measure) -> None:
    handle = await stack.client.start_workflow(
        BareUpdates.run, id=stack.key("bare-idle"), task_queue=stack.bare_queue
    )
    await handle.query(BareUpdates.ready)  # its first task done
    for _ in range(reads):
        idle.values.append(await _timed(lambda: handle.query(BareUpdates.ready)) * 1000)
    await handle.terminate()


async def run(harness: Harness, *, tasks: int, samples: int) -> Result:
    """`samples` fan-outs of `tasks` tasks on each side (alternating), read throughout; then as
    many reads of an idle graph (and an idle bare workflow) as the fan-outs' reads."""
    during = {"synapse": Measure(), "bare": Measure()}
    idle = {"synapse": Measure(), "bare": Measure()}
    rollback = {"synapse": Measure(), "bare": Measure()}
    refused: list[str] = []
    async with harness.stack("reads") as stack:
        for sample in range(samples):
            started = time.monotonic()
            await _synapse_fan_out(stack, tasks, during["synapse"], refused)
            await _bare_fan_out(stack, tasks, during["bare"])
            await _synapse_rollback(stack, rollback["synapse"])
            await _bare_rollback(stack, rollback["bare"])
            progress(f"reads: fan-outs {sample + 1}/{samples} in {time.monotonic() - started:.1f} s")
        reads = min(max(len(during["synapse"].values), IDLE_READS[0]), IDLE_READS[1])
        await _synapse_idle(stack, reads, idle["synapse"])
        await _bare_idle(stack, reads, idle["bare"])
    notes = [f"{len(refused)} reads during the fan-outs were refused, e.g. {refused[0]}"] if refused else []
    busy, calm = during["synapse"].p99, idle["synapse"].p99
    if busy is not None and calm:
        notes.append(
            f"reads of a graph during its {tasks}-task fan-out: p99 {busy:.0f} ms, "
            f"{busy / calm:.1f}x the p99 of the same reads of an idle graph ({calm:.0f} ms)"
        )
    return Result(
        rows=[
            Row(
                f"reads: graph status during a {tasks}-task fan-out",
                "ms",
                during["synapse"],
                during["bare"],
                "GET /graphs/{id} (a query) one after the other while the graph starts and runs every "
                "task; bare: a query of a parent starting and awaiting N children",
            ),
            Row(
                "  reads: the same, idle graph",
                "ms",
                idle["synapse"],
                idle["bare"],
                "the same read of a graph waiting at a gate; bare: a query of an idle workflow",
            ),
            Row(
                f"rollback of a running {ROLLBACK_WIDTH}-wide fan-out",
                "ms",
                rollback["synapse"],
                rollback["bare"],
                "POST ROLLBACK_AND_MODIFY of its root until answered (its runs cancelled, the root "
                "asked to run again); bare: an update of a parent starting and awaiting N children",
            ),
        ],
        notes=notes,
    )
