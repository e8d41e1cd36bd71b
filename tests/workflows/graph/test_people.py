"""People in a graph: gates, tool approvals inside tasks, pausing a task or the whole graph."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from temporalio.api.sdk.v1 import WorkflowMetadata
from temporalio.client import Client, WorkflowUpdateFailedError, WorkflowUpdateStage
from temporalio.exceptions import ApplicationError

from contracts import (
    GraphStatus,
    SessionControl,
)
from workflows.graph import AgentTaskWorkflow, TaskGraphWorkflow

from ...conftest import assert_eventually
from ...decisions import decided
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
    wait_view,
)


async def test_gates_wait_for_a_person_and_a_denial_or_timeout_skips_the_task(
    client: Client, worker: None, task_queue: str
) -> None:
    handle = await start_graph(
        client,
        task_queue,
        {
            "new_tasks": [
                gated("deploy", approvers=["bob"]),
                gated("drop_table"),
                gated("forgotten", timeout_seconds=1),
                task("after_drop"),
            ],
            "new_edges": [edge("drop_table", "after_drop")],
        },
    )
    waiting = await wait_view(handle, lambda v: len(v.pending_interactions) == 2, what="two open gates")
    assert statuses(waiting)["deploy"] == "waiting" and statuses(waiting)["drop_table"] == "waiting"
    gates = {r.content["task_id"]: r for r in waiting.pending_interactions}  # type: ignore[index]
    assert gates["deploy"].interaction_type == "confirmation" and gates["deploy"].approvers == ["bob"]
    assert gates["deploy"].content["prompt"] == "Run deploy?"  # type: ignore[index]
    with pytest.raises(WorkflowUpdateFailedError) as refused:
        await handle.execute_update(
            TaskGraphWorkflow.decide_checked,
            decided(interaction_id=gates["deploy"].interaction_id, approved=True, principal="mallory"),
        )
    assert (
        isinstance(refused.value.cause, ApplicationError) and refused.value.cause.type == "ApproverNotAllowed"
    )
    await handle.execute_update(
        TaskGraphWorkflow.decide_checked,
        decided(interaction_id=gates["deploy"].interaction_id, approved=True, principal="bob"),
    )
    await handle.execute_update(
        TaskGraphWorkflow.decide_checked,
        decided(interaction_id=gates["drop_table"].interaction_id, approved=False, principal="carol"),
    )
    result = await finished(handle)
    tasks = by_id(result)
    assert tasks["deploy"].status == "completed" and tasks["deploy"].reason is None
    assert (
        tasks["drop_table"].status == "skipped"
        and tasks["drop_table"].reason == "its gate was denied by carol"
    )
    assert tasks["after_drop"].status == "skipped"
    assert tasks["forgotten"].status == "skipped" and tasks["forgotten"].reason == "its gate was timed out"
    audit = await handle.query(TaskGraphWorkflow.get_audit)
    assert sorted((e.kind, e.principal) for e in audit if e.kind in ("approved", "denied")) == [
        ("approved", "bob"),
        ("denied", "carol"),
        ("denied", "system:timeout"),
    ]


async def test_a_tool_approval_inside_a_task_is_shown_on_the_graph_and_decided_on_the_task_run(
    client: Client, worker: None, task_queue: str, count_orders: Callable[[str], int]
) -> None:
    handle = await start_graph(
        client,
        task_queue,
        {
            "new_tasks": [
                task("clean", input_data={"sql": "DELETE FROM orders WHERE status = 'cancelled'"}),
                task("after"),
            ],
            "new_edges": [edge("clean", "after")],
        },
    )
    waiting = await wait_view(handle, lambda v: bool(v.pending_interactions), what="the task's tool approval")
    request = waiting.pending_interactions[0]
    assert request.interaction_type == "tool_approval" and request.content["tool_name"] == "sql"  # type: ignore[index]
    assert request.interaction_id.startswith("t") and request.interaction_id.endswith("-tool_1")
    assert request.workflow_id == by_id(waiting)["clean"].workflow_id, "decisions go to the task run"
    assert count_orders("status = 'cancelled'") == 3
    run = client.get_workflow_handle(request.workflow_id)
    shown = await run.query("__temporal_workflow_metadata", result_type=WorkflowMetadata)
    assert f"**task** `clean` v1 of `{handle.id}`" in shown.current_details
    assert f"waits for `{request.interaction_id}`" in shown.current_details, (
        "the Web UI says what it waits for"
    )
    graph_shown = await handle.query("__temporal_workflow_metadata", result_type=WorkflowMetadata)
    assert request.interaction_id in graph_shown.current_details
    outcome = await run.execute_update(
        AgentTaskWorkflow.decide_checked,
        decided(interaction_id=request.interaction_id, approved=True, principal="bob"),
    )
    assert outcome.approved and outcome.tool_result is not None and outcome.tool_result.ok
    result = await finished(handle)
    assert count_orders("status = 'cancelled'") == 0
    assert statuses(result) == {"clean": "completed", "after": "completed"}
    assert "3" in str(by_id(result)["clean"].output) and result.pending_interactions == []


async def test_a_paused_task_and_a_paused_graph_start_nothing_until_resumed(
    client: Client, worker: None, task_queue: str
) -> None:
    handle = await start_graph(
        client,
        task_queue,
        {"new_tasks": [gated("a"), task("b"), gated("c")], "new_edges": [edge("a", "b")]},
    )
    view = await wait_view(handle, lambda v: len(v.pending_interactions) == 2, what="gates a and c")
    paused = await handle.execute_update(
        TaskGraphWorkflow.intervene_checked, intervention(view, "b", "PAUSE")
    )
    assert by_id(paused)["b"].paused
    await decide_gate(handle, view, "a")
    view = await wait_view(handle, lambda v: statuses(v)["b"] == "ready", what="b ready but held")
    assert by_id(view)["b"].paused and by_id(view)["b"].version == 0, "a paused task does not start"
    with pytest.raises(WorkflowUpdateFailedError, match="update failed") as again:
        await handle.execute_update(TaskGraphWorkflow.intervene_checked, intervention(view, "b", "PAUSE"))
    assert isinstance(again.value.cause, ApplicationError) and again.value.cause.type == "TaskAlreadyPaused"

    await handle.execute_update(
        TaskGraphWorkflow.pause_checked, SessionControl(reason="freeze", principal="olga")
    )
    with pytest.raises(WorkflowUpdateFailedError, match="update failed") as twice:
        await handle.execute_update(TaskGraphWorkflow.pause_checked, SessionControl(principal="olga"))
    assert isinstance(twice.value.cause, ApplicationError) and twice.value.cause.type == "AlreadyPaused", (
        "a graph's refusal has the neutral type sessions and task runs share"
    )
    await handle.execute_update(TaskGraphWorkflow.intervene_checked, intervention(view, "b", "RESUME"))
    await decide_gate(handle, view, "c")
    view = await wait_view(handle, lambda v: statuses(v)["c"] == "ready", what="c ready, graph paused")
    assert view.status == GraphStatus.PAUSED and statuses(view)["b"] == "ready", (
        "a paused graph starts nothing"
    )
    await handle.execute_update(TaskGraphWorkflow.resume_checked, SessionControl(principal="olga"))
    result = await finished(handle)
    assert result.status == GraphStatus.COMPLETED and set(statuses(result).values()) == {"completed"}
    audit = await handle.query(TaskGraphWorkflow.get_audit)
    assert [(e.kind, e.principal) for e in audit if e.kind in ("pause", "resume", "paused", "resumed")] == [
        ("pause", "olga"),
        ("paused", "olga"),
        ("resume", "olga"),
        ("resumed", "olga"),
    ]


async def test_a_running_task_halts_at_its_next_safe_point_when_paused(
    client: Client, worker: None, task_queue: str, count_orders: Callable[[str], int]
) -> None:
    handle = await start_graph(
        client,
        task_queue,
        {"new_tasks": [task("clean", input_data={"sql": "DELETE FROM orders WHERE id = 1"})]},
    )
    view = await wait_view(handle, lambda v: bool(v.pending_interactions), what="the tool approval")
    run = client.get_workflow_handle(view.pending_interactions[0].workflow_id)
    await handle.execute_update(TaskGraphWorkflow.intervene_checked, intervention(view, "clean", "PAUSE"))
    await assert_eventually(
        lambda: run.query(AgentTaskWorkflow.get_status), lambda s: s == "paused", what="run paused"
    )
    decision = await run.start_update(
        AgentTaskWorkflow.decide_checked,
        decided(interaction_id=view.pending_interactions[0].interaction_id, approved=True, principal="bob"),
        wait_for_stage=WorkflowUpdateStage.ACCEPTED,
    )
    await wait_view(handle, lambda v: not v.pending_interactions, what="the decision taken")
    assert await run.query(AgentTaskWorkflow.get_status) == "paused"
    assert count_orders("id = 1") == 1, "approved, but the statement waits for the resume"
    await handle.execute_update(TaskGraphWorkflow.intervene_checked, intervention(view, "clean", "RESUME"))
    assert (await decision.result()).tool_result is not None
    await finished(handle)
    assert count_orders("id = 1") == 0
