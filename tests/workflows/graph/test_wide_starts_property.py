"""Every graph the door accepts completes, whatever its shape: a property over task count, input
size, fan-out shape and loop size, run on the real dev server (a few small examples: the wide
cases near the old cliff are in `test_wide_starts`)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from temporalio.client import Client

from contracts import GraphStatus, PlanBlueprint
from core.settings import LimitSettings
from workflows.graph.budget import TASK_PAYLOAD_BUDGET

from .flows import edge, finished, start_graph, task, view_of
from .test_wide_starts import INLINE, carried_per_task

BLUEPRINT_LIMIT = LimitSettings().max_blueprint_bytes


def blueprint(shape: str, count: int, size: int, loop: int) -> dict[str, Any]:
    """`fan`: a root's answer of `size` bytes flows into `count` tasks; `apart`: `count` tasks of
    their own input (a share of `size`); either way beside a loop of `loop` instances, each given
    a template input of `size` bytes."""
    blob = "b" * size
    tasks = [task("root", input_data={"echo": {"blob": blob}})] if shape == "fan" else []
    share = "s" * (size // max(count, 1))
    tasks += [task(f"t{n}", input_data={"echo": n, "share": share}) for n in range(count)]
    edges = [edge("root", f"t{n}", data_flow={"mappings": {"blob": "output.blob"}}) for n in range(count)]
    tasks.append(task("items", input_data={"echo": {"items": list(range(loop))}}))
    loop_directive = {
        "type": "PARALLEL_ITERATION",
        "iteration_input_key": "items",
        "input_source_task_id": "items",
        "task_template": task("one", input_data={"page": blob}),
    }
    tasks.append(task("each", input_data={}, directives={"loop_directive": loop_directive}))
    return {"new_tasks": tasks, "new_edges": edges if shape == "fan" else []}


def within_the_door(plan: dict[str, Any]) -> bool:
    """What POST /graphs accepts (SYNAPSE_MAX_BLUEPRINT_BYTES, measured as the door does)."""
    dumped = PlanBlueprint.model_validate(plan).model_dump(mode="json")
    return len(json.dumps(dumped).encode()) <= BLUEPRINT_LIMIT


@pytest.mark.slow(seconds=90)
@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    shape=st.sampled_from(["fan", "apart"]),
    count=st.integers(min_value=1, max_value=16),
    size=st.sampled_from([1_000, 15_000, 60_000, 110_000]),
    loop=st.integers(min_value=0, max_value=8),
    inline=st.sampled_from([None, INLINE]),
)
async def test_every_accepted_graph_completes_within_the_budget(
    client: Client,
    worker: None,
    task_queue: str,
    shape: str,
    count: int,
    size: int,
    loop: int,
    inline: int | None,
) -> None:
    plan = blueprint(shape, count, size, loop)
    assume(within_the_door(plan))
    handle = await start_graph(client, task_queue, plan, inline_input_bytes=inline)
    result = await finished(handle, within=180)
    assert result.status == GraphStatus.COMPLETED, result.reason
    every = await view_of(handle)
    assert {t.status.value for t in every.tasks} == {"completed"}
    carried = await carried_per_task(client, handle)
    assert max(carried, default=0) <= TASK_PAYLOAD_BUDGET
