"""Re-runs on the dev server: every gate asks on every run (rollback, GOTO, loop instance), the
retry-from-fetch loop, and a plan's update of a task waiting at its gate."""

from __future__ import annotations

from typing import Any

from temporalio.api.enums.v1 import PendingActivityState
from temporalio.client import Client

from contracts import BlueprintChange, GraphStatus, GraphView, PlanBlueprint, TaskUpdate
from workflows.graph import TaskGraphWorkflow

from ...conftest import assert_eventually
from ...decisions import decided
from .flows import (
    by_id,
    decide_gate,
    edge,
    finished,
    intervention,
    start_graph,
    statuses,
    task,
    task_of,
    wait_view,
)


async def step_started(client: Client, run_id: str | None) -> None:
    """Wait until the task run's agent step (an activity) has started."""
    assert run_id is not None

    async def started() -> list[object]:
        described = await client.get_workflow_handle(run_id).describe()
        return [
            a
            for a in described.raw_description.pending_activities
            if a.state == PendingActivityState.PENDING_ACTIVITY_STATE_STARTED
        ]

    await assert_eventually(started, bool, within=60, interval=0.05, what=f"{run_id}'s step started")


def gated(task_id: str, input_data: dict[str, object]) -> dict[str, object]:
    """A gated task with its own input (`flows.gated` takes gate fields)."""
    return task(
        task_id, input_data=input_data, directives={"human_interaction": {"prompt": f"Run {task_id}?"}}
    )


def gates_of(view: GraphView, task_id: str) -> list[dict[str, Any]]:
    """The contents of the requests waiting for `task_id` (its gate, or its instances')."""
    return [
        r.content
        for r in view.pending_interactions
        if isinstance(r.content, dict) and r.content["task_id"] == task_id
    ]


async def test_the_retry_loop_asks_the_gate_again_and_finishes(
    client: Client, worker: None, task_queue: str
) -> None:
    handle = await start_graph(
        client,
        task_queue,
        {
            "new_tasks": [
                gated("fetch", input_data={}),
                task(
                    "process",
                    input_data={"echo": "processed"},
                    directives={"on_failure": {"type": "GOTO", "target_task_id": "fetch"}},
                ),
            ],
            # the first fetch has no failure to pass on: the data flow fails process, which goes
            # back to fetch; the second fetch carries input_data.failure, and process succeeds
            "new_edges": [
                edge("fetch", "process", data_flow={"mappings": {"attempt": "output.failure.attempt"}})
            ],
        },
    )
    first = await wait_view(handle, lambda v: bool(gates_of(v, "fetch")), what="fetch's gate")
    await decide_gate(handle, first, "fetch")
    again = await wait_view(
        handle,
        lambda v: bool(gates_of(v, "fetch")) and by_id(v)["fetch"].version == 1,
        what="fetch asked again",
    )
    assert statuses(again)["process"] == "pending"
    assert gates_of(again, "fetch")[0]["input_data"]["failure"]["task_id"] == "process"
    await decide_gate(handle, again, "fetch")
    result = await finished(handle)
    assert result.status == GraphStatus.COMPLETED, result
    tasks = by_id(result)
    assert tasks["fetch"].version == 2 and tasks["process"].output == "processed"
    audit = await handle.query(TaskGraphWorkflow.get_audit)
    assert [e.principal for e in audit if e.kind == "approved"] == ["bob", "bob"], "asked once per run"


async def test_a_rolled_back_gated_task_waits_for_a_person_again(
    client: Client, worker: None, task_queue: str
) -> None:
    handle = await start_graph(
        client,
        task_queue,
        {
            "new_tasks": [
                task("build", input_data={"echo": "v1"}),
                gated("deploy", input_data={}),
                task("notify", input_data={"sleep_seconds": 30}),
            ],
            "new_edges": [
                edge("build", "deploy", data_flow={"mappings": {"artifact": "output"}}),
                edge("deploy", "notify"),
            ],
        },
    )
    view = await wait_view(handle, lambda v: bool(gates_of(v, "deploy")), what="deploy's gate")
    await decide_gate(handle, view, "deploy")
    done = await wait_view(handle, lambda v: statuses(v)["notify"] == "running", what="deployed once")
    await handle.execute_update(
        TaskGraphWorkflow.intervene_checked,
        intervention(done, "build", "ROLLBACK_AND_MODIFY", new_input_data={"echo": "v2"}),
    )
    asked = await wait_view(handle, lambda v: bool(gates_of(v, "deploy")), what="deploy asked again")
    assert gates_of(asked, "deploy")[0]["input_data"] == {"artifact": "v2"}
    assert statuses(asked)["deploy"] == "waiting" and by_id(asked)["deploy"].version == 1, "not run unasked"
    await decide_gate(handle, asked, "deploy", approved=False)
    result = await finished(handle)
    tasks = by_id(result)
    assert tasks["build"].version == 2 and tasks["deploy"].status == "skipped"
    assert tasks["notify"].status == "skipped"
    deploy = await task_of(handle, result, "deploy")
    assert [v.superseded for v in deploy.versions] == [True], "the denied re-run never started"


async def test_each_instance_of_a_gated_loop_template_asks(
    client: Client, worker: None, task_queue: str
) -> None:
    template = gated("each", input_data={})
    handle = await start_graph(
        client,
        task_queue,
        {
            "new_tasks": [
                task("list", input_data={"echo": ["a", "b"]}),
                task(
                    "loop",
                    input_data={"mode": "careful"},
                    directives={
                        "loop_directive": {
                            "type": "PARALLEL_ITERATION",
                            "iteration_input_key": "item",
                            "input_source_task_id": "list",
                            "task_template": template,
                        }
                    },
                ),
            ],
        },
    )
    view = await wait_view(handle, lambda v: len(gates_of(v, "loop")) == 2, what="two instance gates")
    asked = sorted(gates_of(view, "loop"), key=lambda c: c["instance"])
    assert [c["input_data"] for c in asked] == [
        {"mode": "careful", "item": "a"},
        {"mode": "careful", "item": "b"},
    ]
    first, second = sorted(view.pending_interactions, key=lambda r: r.content["instance"])  # type: ignore[index]
    for request, approved in ((first, True), (second, False)):
        await handle.execute_update(
            TaskGraphWorkflow.decide_checked,
            decided(interaction_id=request.interaction_id, approved=approved, principal="bob"),
        )
    result = await finished(handle)
    assert result.status == GraphStatus.COMPLETED, result
    assert by_id(result)["loop"].output == [{"mode": "careful", "item": "a"}, None], (
        "the denied one is skipped"
    )


async def test_a_plans_update_of_a_task_waiting_at_its_gate_asks_again_with_the_new_input(
    client: Client, worker: None, task_queue: str
) -> None:
    handle = await start_graph(
        client, task_queue, {"new_tasks": [gated("send", input_data={"echo": "draft"})]}
    )
    view = await wait_view(handle, lambda v: bool(gates_of(v, "send")), what="send's gate")
    await handle.execute_update(
        TaskGraphWorkflow.extend,
        BlueprintChange(
            blueprint=PlanBlueprint(
                update_tasks=[
                    TaskUpdate(task_uuid=by_id(view)["send"].task_uuid, new_input_data={"echo": "final"})
                ]
            ),
            principal="alice",
        ),
    )
    asked = await wait_view(
        handle,
        lambda v: [g["input_data"] for g in gates_of(v, "send")] == [{"echo": "final"}],
        what="asked again",
    )
    await decide_gate(handle, asked, "send")
    result = await finished(handle)
    assert by_id(result)["send"].output == "final"


async def test_a_paused_tasks_result_is_recorded_but_the_tasks_after_it_wait_for_resume(
    client: Client, worker: None, task_queue: str
) -> None:
    handle = await start_graph(
        client,
        task_queue,
        {
            "new_tasks": [task("a", input_data={"echo": "A", "sleep_seconds": 2}), task("b", input_data={})],
            "new_edges": [edge("a", "b", data_flow={"mappings": {"from_a": "output"}})],
        },
    )
    running = await wait_view(handle, lambda v: statuses(v)["a"] == "running", what="a running")
    # Its step under way: a run paused before its step begins holds there until resumed (and a
    # loaded machine can start the run well before its step).
    await step_started(client, by_id(running)["a"].workflow_id)
    await handle.execute_update(TaskGraphWorkflow.intervene_checked, intervention(running, "a", "PAUSE"))
    held = await wait_view(handle, lambda v: statuses(v)["a"] == "completed", what="a's result recorded")
    assert statuses(held)["b"] == "pending" and by_id(held)["a"].paused, "b waits: a's result is held"
    await handle.execute_update(TaskGraphWorkflow.intervene_checked, intervention(held, "a", "RESUME"))
    result = await finished(handle)
    assert by_id(result)["b"].output == {"from_a": "A"}
