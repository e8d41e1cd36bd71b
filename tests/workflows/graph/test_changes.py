"""Graphs that change while they run: rollback-and-modify, refused interventions, plans agents add,
and continue-as-new in the middle."""

from __future__ import annotations

import uuid

import pytest
from temporalio.client import Client, WorkflowExecutionStatus, WorkflowUpdateFailedError
from temporalio.exceptions import ApplicationError

from contracts import (
    GraphStatus,
)
from workflows.graph import TaskGraphWorkflow
from workflows.graph.state import GRAPH_TASK_TIMEOUT

from ...conftest import assert_eventually
from ...support import replayer
from .flows import (
    by_id,
    decide_gate,
    edge,
    finished,
    gated,
    intervention,
    start_graph,
    statuses,
    task,
    task_of,
    task_timeout,
    wait_view,
)


async def test_rollback_and_modify_reruns_the_target_and_everything_downstream(
    client: Client, worker: None, task_queue: str
) -> None:
    handle = await start_graph(
        client,
        task_queue,
        {
            "new_tasks": [
                task("extract", input_data={"echo": {"limit": 10, "sleep": 30}}),
                task("transform", input_data={}),
                task("load", input_data={}),
            ],
            "new_edges": [
                edge(
                    "extract",
                    "transform",
                    data_flow={"mappings": {"limit": "output.limit", "sleep_seconds": "output.sleep"}},
                ),
                edge("transform", "load", data_flow={"mappings": {"limit": "output.limit"}}),
            ],
        },
    )
    view = await wait_view(handle, lambda v: statuses(v)["transform"] == "running", what="transform running")
    first_transform = by_id(view)["transform"].workflow_id
    rolled = await handle.execute_update(
        TaskGraphWorkflow.intervene_checked,
        intervention(
            view,
            "extract",
            "ROLLBACK_AND_MODIFY",
            rollback_to_version=1,
            new_input_data={"echo": {"limit": 99, "sleep": 0}},
        ),
    )
    assert by_id(rolled)["extract"].version == 2
    result = await finished(handle)
    assert result.status == GraphStatus.COMPLETED, result
    tasks = by_id(result)
    assert tasks["load"].output == {"limit": 99} and tasks["load"].version == 1
    assert tasks["transform"].version == 2 and tasks["transform"].output == {"limit": 99, "sleep_seconds": 0}
    extract = await task_of(handle, result, "extract")
    assert [(v.version, v.superseded, v.output) for v in extract.versions] == [
        (1, True, {"limit": 10, "sleep": 30}),
        (2, False, {"limit": 99, "sleep": 0}),
    ]
    transform = await task_of(handle, result, "transform")
    assert [(v.status.value, v.superseded) for v in transform.versions] == [
        ("cancelled", True),
        ("completed", False),
    ]
    assert first_transform is not None
    cancelled = await client.get_workflow_handle(first_transform).describe()
    assert cancelled.status == WorkflowExecutionStatus.CANCELED, "the running downstream run was cancelled"
    audit = await handle.query(TaskGraphWorkflow.get_audit)
    assert any(e.kind == "rollback_and_modify" and e.principal == "olga" for e in audit)


async def test_refused_interventions_say_why(client: Client, worker: None, task_queue: str) -> None:
    handle = await start_graph(client, task_queue, {"new_tasks": [gated("later"), task("done")]})
    view = await wait_view(handle, lambda v: statuses(v)["done"] == "completed", what="done")
    cases = [
        (intervention(view, "later", "ROLLBACK_AND_MODIFY"), "TaskNeverRan", "never ran"),
        (intervention(view, "later", "RESUME"), "TaskNotPaused", "is not paused"),
        (intervention(view, "done", "PAUSE"), "TaskFinished", "has completed"),
        (
            intervention(view, "done", "ROLLBACK_AND_MODIFY", rollback_to_version=3),
            "VersionNotFound",
            "versions 1 to 1",
        ),
        (
            intervention(view, "done", "PAUSE").model_copy(update={"target_task_uuid": uuid.uuid4()}),
            "TaskNotFound",
            "no task",
        ),
    ]
    for request, error_type, words in cases:
        with pytest.raises(WorkflowUpdateFailedError) as refused:
            await handle.execute_update(TaskGraphWorkflow.intervene_checked, request)
        assert isinstance(refused.value.cause, ApplicationError)
        assert refused.value.cause.type == error_type and words in refused.value.cause.message
    await handle.cancel()


async def test_an_agent_extends_its_own_graph_and_a_bad_plan_is_refused_not_fatal(
    client: Client, worker: None, task_queue: str
) -> None:
    plan = {
        "new_tasks": [task("child", input_data={"echo": "from the plan"})],
        "new_edges": [edge("planner", "child"), edge("child", "closing")],
    }
    bad_plan = {"new_tasks": [task("orphan")], "new_edges": [edge("orphan", "nowhere")]}
    handle = await start_graph(
        client,
        task_queue,
        {
            "new_tasks": [
                task("planner", input_data={"plan": plan}),
                task("closing", input_data={"echo": "closing"}),
                task("dreamer", input_data={"plan": bad_plan}),
            ],
            "new_edges": [edge("planner", "closing")],
        },
    )
    result = await finished(handle)
    tasks = by_id(result)
    assert tasks["child"].status == "completed" and tasks["child"].output == "from the plan"
    assert tasks["closing"].started_at and tasks["child"].finished_at
    assert tasks["closing"].started_at >= tasks["child"].finished_at, "the plan's edge made closing wait"
    assert tasks["planner"].output == {"plan": ["child"]}
    assert tasks["dreamer"].status == "completed" and "its plan was refused" in (
        tasks["dreamer"].reason or ""
    )
    assert "names unknown task 'nowhere'" in (tasks["dreamer"].reason or "")
    assert "orphan" not in tasks, "a refused plan adds nothing"
    audit = await handle.query(TaskGraphWorkflow.get_audit)
    assert [(e.kind, e.principal) for e in audit if e.kind in ("extended", "plan_refused")] == [
        ("extended", "alice"),
        ("extended", "Agent:demo"),
        ("plan_refused", "Agent:demo"),
    ] or sorted((e.kind, e.principal) for e in audit if e.kind in ("extended", "plan_refused")) == sorted(
        [("extended", "alice"), ("extended", "Agent:demo"), ("plan_refused", "Agent:demo")]
    )


async def test_continue_as_new_mid_graph_loses_no_running_task_and_no_open_gate(
    client: Client, worker: None, task_queue: str
) -> None:
    handle = await start_graph(
        client,
        task_queue,
        {
            "new_tasks": [
                *[task(f"w{n}", input_data={"echo": n}) for n in range(12)],
                task("slow", input_data={"sleep_seconds": 2, "echo": "slow"}),
                gated("gate"),
                task("join", input_data={}),
            ],
            "new_edges": [
                *[edge(f"w{n}", "join", data_flow={"mappings": {f"n{n}": "output"}}) for n in range(12)],
                edge("slow", "join"),
                edge("gate", "join"),
            ],
        },
        cas_after=30,  # right after the tasks start: they and the gate outlive the run
    )
    view = await wait_view(handle, lambda v: bool(v.pending_interactions), what="the open gate")
    runs = await assert_eventually(
        lambda: _runs(client, handle.id), lambda found: len(found) >= 2, within=30, what="a continue-as-new"
    )
    await decide_gate(handle, view, "gate")
    result = await finished(handle)
    assert result.status == GraphStatus.COMPLETED, result
    assert by_id(result)["join"].output == {f"n{n}": n for n in range(12)}
    runs = await _runs(client, handle.id)
    for run_id in runs:
        assert await task_timeout(client, handle.id, run_id) == GRAPH_TASK_TIMEOUT, "kept across runs"
        history = await client.get_workflow_handle(handle.id, run_id=run_id).fetch_history()
        await replayer(client.data_converter).replay_workflow(history)


async def _runs(client: Client, workflow_id: str) -> list[str]:
    return [execution.run_id async for execution in client.list_workflows(f"WorkflowId = '{workflow_id}'")]
