"""Task graphs on a real dev server with the demo agents: waves, data flow, branches, failures, loops."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import pytest
from temporalio.client import Client, WorkflowExecutionStatus, WorkflowUpdateFailedError, WorkflowUpdateStage
from temporalio.exceptions import ApplicationError
from temporalio.worker import Replayer

from contracts import (
    EdgeStatus,
    GraphIntervention,
    GraphStatus,
    GraphView,
    InteractionResponse,
    SessionControl,
)
from worker import WORKFLOWS
from workflows.graph import AgentTaskWorkflow, TaskGraphWorkflow

from ...conftest import assert_eventually
from .flows import GraphHandle, by_id, edge, start_graph, statuses, task, task_of, wait_view


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
    result = await handle.result()
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
    result = await handle.result()
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
    result = await handle.result()
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
    result = await handle.result()
    tasks = by_id(result)
    assert tasks["charge"].status == "failed" and "continued at 'refund'" in (tasks["charge"].reason or "")
    assert tasks["ship"].status == "skipped"
    assert tasks["refund"].status == "completed" and tasks["refund"].output == "refunded"
    assert tasks["slow"].status == "failed" and "timed out after 1 s" in (tasks["slow"].reason or "")
    assert tasks["unused_fallback"].status == "completed", "not a GOTO target: it runs like any task"
    assert result.status == GraphStatus.FAILED and result.reason and "slow" in result.reason
    assert "charge" not in result.reason, "a failure taken up by a GOTO does not fail the graph"


def gated(task_id: str, **gate: object) -> dict[str, object]:
    return task(task_id, directives={"human_interaction": {"prompt": f"Run {task_id}?", **gate}})


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
            TaskGraphWorkflow.respond_checked,
            InteractionResponse(
                interaction_id=gates["deploy"].interaction_id, approved=True, principal="mallory"
            ),
        )
    assert (
        isinstance(refused.value.cause, ApplicationError) and refused.value.cause.type == "ApproverNotAllowed"
    )
    await handle.execute_update(
        TaskGraphWorkflow.respond_checked,
        InteractionResponse(interaction_id=gates["deploy"].interaction_id, approved=True, principal="bob"),
    )
    await handle.execute_update(
        TaskGraphWorkflow.respond_checked,
        InteractionResponse(
            interaction_id=gates["drop_table"].interaction_id, approved=False, principal="carol"
        ),
    )
    result = await handle.result()
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
    assert request.task_id == by_id(waiting)["clean"].workflow_id, "decisions go to the task run"
    assert count_orders("status = 'cancelled'") == 3
    run = client.get_workflow_handle(request.task_id)
    outcome = await run.execute_update(
        AgentTaskWorkflow.respond_checked,
        InteractionResponse(interaction_id=request.interaction_id, approved=True, principal="bob"),
    )
    assert outcome.approved and outcome.tool_result and outcome.tool_result["ok"]
    result = await handle.result()
    assert count_orders("status = 'cancelled'") == 0
    assert statuses(result) == {"clean": "completed", "after": "completed"}
    assert "3" in str(by_id(result)["clean"].output) and result.pending_interactions == []


def intervention(view: GraphView, task_id: str, kind: str, **extra: Any) -> GraphIntervention:
    return GraphIntervention(
        intervention_type=kind,
        target_task_id=by_id(view)[task_id].task_uuid,
        comment=f"{kind.lower()} {task_id}",
        principal="olga",
        **extra,
    )


async def decide_gate(handle: GraphHandle, view: GraphView, task_id: str, approved: bool = True) -> None:
    request = next(r for r in view.pending_interactions if r.content["task_id"] == task_id)  # type: ignore[index]
    await handle.execute_update(
        TaskGraphWorkflow.respond_checked,
        InteractionResponse(interaction_id=request.interaction_id, approved=approved, principal="bob"),
    )


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
    await handle.execute_update(TaskGraphWorkflow.intervene_checked, intervention(view, "b", "RESUME"))
    await decide_gate(handle, view, "c")
    view = await wait_view(handle, lambda v: statuses(v)["c"] == "ready", what="c ready, graph paused")
    assert view.status == GraphStatus.PAUSED and statuses(view)["b"] == "ready", (
        "a paused graph starts nothing"
    )
    await handle.execute_update(TaskGraphWorkflow.resume_checked, SessionControl(principal="olga"))
    result = await handle.result()
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
    run = client.get_workflow_handle(view.pending_interactions[0].task_id)
    await handle.execute_update(TaskGraphWorkflow.intervene_checked, intervention(view, "clean", "PAUSE"))
    await assert_eventually(
        lambda: run.query(AgentTaskWorkflow.get_status), lambda s: s == "paused", what="run paused"
    )
    decision = await run.start_update(
        AgentTaskWorkflow.respond_checked,
        InteractionResponse(
            interaction_id=view.pending_interactions[0].interaction_id, approved=True, principal="bob"
        ),
        wait_for_stage=WorkflowUpdateStage.ACCEPTED,
    )
    await wait_view(handle, lambda v: not v.pending_interactions, what="the decision taken")
    assert await run.query(AgentTaskWorkflow.get_status) == "paused"
    assert count_orders("id = 1") == 1, "approved, but the statement waits for the resume"
    await handle.execute_update(TaskGraphWorkflow.intervene_checked, intervention(view, "clean", "RESUME"))
    assert (await decision.result()).tool_result is not None
    await handle.result()
    assert count_orders("id = 1") == 0


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
    result = await handle.result()
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
            intervention(view, "done", "PAUSE").model_copy(update={"target_task_id": uuid.uuid4()}),
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
    result = await handle.result()
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
        cas_after=60,
    )
    view = await wait_view(handle, lambda v: bool(v.pending_interactions), what="the open gate")
    runs = await assert_eventually(
        lambda: _runs(client, handle.id), lambda found: len(found) >= 2, within=30, what="a continue-as-new"
    )
    await decide_gate(handle, view, "gate")
    result = await handle.result()
    assert result.status == GraphStatus.COMPLETED, result
    assert by_id(result)["join"].output == {f"n{n}": n for n in range(12)}
    runs = await _runs(client, handle.id)
    for run_id in runs:
        history = await client.get_workflow_handle(handle.id, run_id=run_id).fetch_history()
        await Replayer(workflows=list(WORKFLOWS), data_converter=client.data_converter).replay_workflow(
            history
        )


async def _runs(client: Client, workflow_id: str) -> list[str]:
    return [execution.run_id async for execution in client.list_workflows(f"WorkflowId = '{workflow_id}'")]
