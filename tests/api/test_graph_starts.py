"""Graphs' starts within Temporal's limits over HTTP: large inputs go to their runs by reference
(SYNAPSE_INLINE_BYTES), and a graph too large to run is refused at every door with 413 and the
numbers."""

from __future__ import annotations

import re

import httpx
from temporalio.client import Client

from core.settings import Settings
from workflows.identity.ids import task_run_workflow_id

from ..workflows.graph.flows import task
from ..workflows.graph.test_wide_starts import loop_of
from .test_graphs import submit, wait_graph


async def test_a_loop_of_25_instances_of_a_200_kb_input_runs_its_inputs_by_reference(
    http: httpx.AsyncClient, client: Client, settings: Settings
) -> None:
    page = "p" * 200_000
    created = await submit(http, loop_of(25, {"page": page}))
    gid = created["graph_id"]
    done = await wait_graph(http, gid, lambda v: v.status in ("completed", "failed"), "the graph done")
    assert done.status == "completed", done.reason
    each = (await http.get(f"/graphs/{gid}/tasks/{created['tasks']['each']}")).json()
    instances = each["versions"][0]["instances"]
    assert len(instances) == 25
    assert all(i["artifact"]["size_bytes"] > 200_000 for i in instances), "each agent read the whole page"
    run_id = task_run_workflow_id(done.workflow_id, created["tasks"]["each"], 1, 24)
    async for first in client.get_workflow_handle(run_id).fetch_history_events():
        started = first.workflow_execution_started_event_attributes
        break
    carried = sum(p.ByteSize() for p in started.input.payloads)
    assert carried < settings.limits.inline_bytes, f"the start carried {carried:,} bytes, not the page"


async def test_a_graph_too_large_to_run_is_413_naming_the_numbers_at_every_door(
    http: httpx.AsyncClient, settings: Settings
) -> None:
    limit = settings.limits.max_blueprint_bytes
    too_large = {"new_tasks": [task("big", input_data={"blob": "x" * (limit + 1)})]}
    refused = await http.post("/graphs", json={"blueprint": too_large})
    gid = (await submit(http, {"new_tasks": [task("small")]}))["graph_id"]
    extended = await http.post(f"/graphs/{gid}/blueprint", json=too_large)
    for answer in (refused, extended):
        assert answer.status_code == 413, answer.text
        detail = answer.json()["detail"]
        size = int(re.search(r"is ([\d,]+) bytes", detail).group(1).replace(",", ""))  # type: ignore[union-attr]
        assert size > limit and f"the limit is {limit:,} bytes (SYNAPSE_MAX_BLUEPRINT_BYTES)" in detail, (
            detail
        )
