"""Graphs over HTTP: submit, watch (state, diagram, events), decide, extend, intervene, refuse."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from temporalio.client import Client

from contracts import GraphFinished, GraphView, TaskChanged, TaskChunkType
from workflows.graph import TaskGraphWorkflow
from workflows.graph.state import GRAPH_TASK_TIMEOUT

from ..conftest import assert_eventually
from ..support import collect_events, event_of, events
from ..workflows.graph.flows import edge, gated, task, task_timeout


async def submit(http: httpx.AsyncClient, blueprint: dict[str, Any], **extra: Any) -> dict[str, Any]:
    response = await http.post("/graphs", json={"blueprint": blueprint, **extra})
    assert response.status_code == 201, response.text
    created: dict[str, Any] = response.json()
    return created


async def graph(http: httpx.AsyncClient, graph_id: str, **params: Any) -> GraphView:
    response = await http.get(f"/graphs/{graph_id}", params=params)
    assert response.status_code == 200, response.text
    return GraphView.model_validate(response.json())


async def wait_graph(
    http: httpx.AsyncClient, graph_id: str, check: Any, what: str = "graph state"
) -> GraphView:
    return await assert_eventually(lambda: graph(http, graph_id), check, within=60, interval=0.1, what=what)


def status_of(view: GraphView) -> dict[str, str]:
    return {t.task_id: t.status.value for t in view.tasks}


async def test_a_blueprint_runs_and_can_be_watched_three_ways(http: httpx.AsyncClient) -> None:
    created = await submit(
        http,
        {
            "new_tasks": [task("a", input_data={"echo": {"n": 1}}), task("b", input_data={}), task("c")],
            "new_edges": [edge("a", "b", data_flow={"mappings": {"n": "output.n"}}), edge("b", "c")],
        },
    )
    assert (
        set(created["tasks"]) == {"a", "b", "c"} and created["workflow_id"] == f"graph:{created['graph_id']}"
    )
    chunks = await collect_events(
        http,
        "",
        lambda c: c.chunk_type == TaskChunkType.COMPLETE,
        path=f"/graphs/{created['graph_id']}/events",
        within=60,
    )
    started = [c.task_id for c in events(chunks, TaskChanged) if c.status == "running"]
    assert started == ["a", "b", "c"], "each task's start is on the stream, in order"
    final = event_of(chunks[-1], GraphFinished)
    assert final.status == "completed" and final.outputs == {"c": "c"}
    view = await graph(http, created["graph_id"])
    assert view.status == "completed" and status_of(view) == {
        "a": "completed",
        "b": "completed",
        "c": "completed",
    }
    assert {t.task_id: t.output for t in view.tasks}["b"] == {"n": 1}
    diagram = await http.get(f"/graphs/{created['graph_id']}/diagram")
    assert diagram.status_code == 200 and diagram.text.startswith("flowchart TD")
    assert 't0["a<br/>completed"]:::completed' in diagram.text and "t0 ==> t1" in diagram.text
    one = await http.get(f"/graphs/{created['graph_id']}/tasks/{created['tasks']['b']}")
    assert one.status_code == 200 and one.json()["versions"][0]["input_data"] == {"n": 1}
    missing = await http.get(f"/graphs/{created['graph_id']}/tasks/00000000-0000-0000-0000-000000000000")
    assert missing.status_code == 404


async def test_gates_and_tool_approvals_are_decided_over_http(
    http: httpx.AsyncClient, count_orders: Any
) -> None:
    created = await submit(
        http,
        {
            "new_tasks": [
                gated("deploy", approvers=["bob"]),
                task("cleanup", input_data={"sql": "DELETE FROM orders WHERE status = 'cancelled'"}),
            ],
        },
    )
    gid = created["graph_id"]
    view = await wait_graph(
        http, gid, lambda v: len(v.pending_interactions) == 2, "a gate and a tool approval"
    )
    kinds = {r.interaction_type.value: r for r in view.pending_interactions}
    gate, approval = kinds["confirmation"], kinds["tool_approval"]
    refused = await http.post(
        f"/graphs/{gid}/interactions/{gate.interaction_id}", json={"approved": True, "principal": "eve"}
    )
    assert refused.status_code == 403 and "bob" in refused.json()["detail"]
    decided = await http.post(
        f"/graphs/{gid}/interactions/{gate.interaction_id}", json={"approved": True, "principal": "bob"}
    )
    assert decided.status_code == 200 and decided.json()["decided_by"] == "bob"
    again = await http.post(
        f"/graphs/{gid}/interactions/{gate.interaction_id}", json={"approved": False, "principal": "bob"}
    )
    assert again.status_code == 409 and "already approved by bob" in again.json()["detail"]
    applied = await http.post(
        f"/graphs/{gid}/interactions/{approval.interaction_id}", json={"approved": True, "principal": "bob"}
    )
    assert applied.status_code == 200 and applied.json()["tool_result"]["content"]["rowcount"] == 3
    assert count_orders("status = 'cancelled'") == 0
    unknown = await http.post(f"/graphs/{gid}/interactions/nope", json={"approved": True})
    assert unknown.status_code == 404
    done = await wait_graph(http, gid, lambda v: v.status == "completed", "the graph done")
    assert status_of(done) == {"deploy": "completed", "cleanup": "completed"}


async def test_interventions_and_extensions_over_http(http: httpx.AsyncClient) -> None:
    created = await submit(http, {"new_tasks": [gated("hold"), task("first", input_data={"echo": "v1"})]})
    gid = created["graph_id"]
    await wait_graph(http, gid, lambda v: status_of(v)["first"] == "completed", "first done")
    extended = await http.post(
        f"/graphs/{gid}/blueprint",
        json={
            "new_tasks": [task("second", input_data={})],
            "new_edges": [edge("first", "second", data_flow={"mappings": {"was": "output"}})],
        },
    )
    assert extended.status_code == 200, extended.text
    view = await wait_graph(http, gid, lambda v: status_of(v).get("second") == "completed", "second done")
    assert {t.task_id: t.output for t in view.tasks}["second"] == {"was": "v1"}
    rolled = await http.post(
        f"/graphs/{gid}/interventions",
        json={
            "intervention_type": "ROLLBACK_AND_MODIFY",
            "target_task_id": created["tasks"]["first"],
            "new_input_data": {"echo": "v2"},
            "comment": "wrong data",
        },
    )
    assert rolled.status_code == 200, rolled.text
    view = await wait_graph(
        http,
        gid,
        lambda v: {t.task_id: (t.version, t.output) for t in v.tasks}.get("second") == (2, {"was": "v2"}),
        "second re-run",
    )
    first = (await http.get(f"/graphs/{gid}/tasks/{created['tasks']['first']}")).json()
    assert [(v["version"], v["superseded"], v["output"]) for v in first["versions"]] == [
        (1, True, "v1"),
        (2, False, "v2"),
    ]
    finished = await http.post(
        f"/graphs/{gid}/blueprint",
        json={"update_tasks": [{"task_id": created["tasks"]["first"], "new_input_data": {"echo": "v3"}}]},
    )
    assert finished.status_code == 409 and "ROLLBACK_AND_MODIFY" in finished.json()["detail"], finished.text
    refusals = [
        (
            {"intervention_type": "RESUME", "target_task_id": created["tasks"]["hold"], "comment": "x"},
            409,
            "is not paused",
        ),
        (
            {
                "intervention_type": "ROLLBACK_AND_MODIFY",
                "target_task_id": created["tasks"]["hold"],
                "comment": "x",
            },
            409,
            "never ran",
        ),
        (
            {
                "intervention_type": "ROLLBACK_AND_MODIFY",
                "target_task_id": created["tasks"]["first"],
                "rollback_to_version": 7,
                "comment": "x",
            },
            422,
            "rollback_to_version 7",
        ),
        (
            {
                "intervention_type": "PAUSE",
                "target_task_id": "00000000-0000-0000-0000-000000000000",
                "comment": "x",
            },
            404,
            "no task",
        ),
        (
            {
                "intervention_type": "ROLLBACK_AND_MODIFY",
                "target_task_id": created["tasks"]["first"],
                "new_assignee_id": "Agent:nobody",
                "comment": "x",
            },
            422,
            "Agent:nobody",
        ),
        (
            {
                "intervention_type": "PAUSE",
                "target_task_id": created["tasks"]["hold"],
                "new_input_data": {"echo": "v9"},
                "rollback_to_version": 1,
                "comment": "x",
            },
            422,
            "PAUSE takes no rollback_to_version, new_input_data: they go with ROLLBACK_AND_MODIFY",
        ),
    ]
    for body, status, words in refusals:
        answer = await http.post(f"/graphs/{gid}/interventions", json=body)
        assert answer.status_code == status and words in answer.json()["detail"], (body, answer.text)
    paused = await http.post(f"/graphs/{gid}/pause", json={"reason": "lunch"})
    assert paused.status_code == 200 and paused.json()["status"] == "paused"
    assert (await http.post(f"/graphs/{gid}/pause")).status_code == 409
    assert (await http.post(f"/graphs/{gid}/resume")).json()["status"] == "running"
    cancelled = await http.post(f"/graphs/{gid}/cancel", json={"reason": "done here"})
    assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled"
    assert (await http.post(f"/graphs/{gid}/pause")).status_code == 409, "a closed graph takes no commands"


@pytest.mark.parametrize(
    ("blueprint", "status", "words"),
    [
        ({"new_tasks": [task("a"), task("a")]}, 422, "task 'a': the task id is used twice"),
        ({"new_tasks": [task("a")], "new_edges": [edge("a", "ghost")]}, 422, "names unknown task 'ghost'"),
        (
            {"new_tasks": [task("a"), task("b")], "new_edges": [edge("a", "b"), edge("b", "a")]},
            422,
            "cycle: a → b → a",
        ),
        (
            {
                "new_tasks": [task("a"), task("b")],
                "new_edges": [edge("a", "b", condition={"evaluator": "CEL", "expression": "output.x >"})],
            },
            422,
            "does not compile",
        ),
        (
            {"new_tasks": [task("a", assignee_id="Agent:ghost")]},
            422,
            "assignee 'Agent:ghost' is not declared",
        ),
        ({"new_tasks": [task("a", input_data={"blob": "x" * 300_000})]}, 413, "SYNAPSE_MAX_BLUEPRINT_BYTES"),
        ({"new_tasks": []}, 422, "the blueprint is empty"),
        (
            {
                "new_tasks": [
                    task(
                        "a",
                        context_overrides={"override_context_config": {"task_list_config": {"status_in": 5}}},
                    )
                ]
            },
            422,
            "task 'a': context_overrides.override_context_config.task_list_config.status_in must be a list of "
            "task statuses",
        ),
        (
            {"new_tasks": [task("a", context_overrides={"override_context_config": {"colour": "red"}})]},
            422,
            "task 'a': context_overrides.override_context_config has unknown fields ['colour']",
        ),
        (
            {
                "new_tasks": [
                    task("src", input_data={"echo": [1, 2]}),
                    task(
                        "each",
                        directives={
                            "loop_directive": {
                                "type": "PARALLEL_ITERATION",
                                "iteration_input_key": "item",
                                "input_source_task_id": "src",
                                "task_template": task("one", directives={"timeout_seconds": -5}),
                            }
                        },
                    ),
                ]
            },
            422,
            "task 'each', task_template 'one': directives.timeout_seconds must be a whole number of seconds "
            "from 1 to 2592000 (30 days), got -5",
        ),
        (
            {"workflow_id": "7f0c2a3e-0000-4000-8000-000000000000", "new_tasks": [task("a")]},
            422,
            "a new graph's id is chosen by the server",
        ),
        (
            {
                "new_tasks": [
                    task("main"),
                    task("h1", directives={"on_failure": {"type": "GOTO", "target_task_id": "h2"}}),
                    task("h2", directives={"on_failure": {"type": "GOTO", "target_task_id": "h1"}}),
                ]
            },
            422,
            "task 'h1': directives.on_failure GOTO names task 'h2', which can never run: tasks 'h1', 'h2' run "
            "only when a failure leads there",
        ),
    ],
)
async def test_a_bad_blueprint_is_refused_at_the_door(
    http: httpx.AsyncClient, blueprint: dict[str, Any], status: int, words: str
) -> None:
    response = await http.post("/graphs", json={"blueprint": blueprint})
    assert response.status_code == status and words in response.json()["detail"], response.text


async def test_an_extension_names_no_other_graph_and_is_checked_like_a_new_one(
    http: httpx.AsyncClient,
) -> None:
    created = await submit(http, {"new_tasks": [gated("hold")]})
    gid = created["graph_id"]
    other = "7f0c2a3e-0000-4000-8000-000000000000"
    refusals = [
        (
            {"workflow_id": other, "new_tasks": [task("x")]},
            f"workflow_id {other} names another graph than graph '{gid}'",
        ),
        (
            {
                "new_tasks": [
                    task(
                        "x", directives={"on_failure": {"type": "GOTO", "target_task_id": "hold", "tries": 2}}
                    )
                ]
            },
            "task 'x': directives.on_failure has unknown fields ['tries']",
        ),
    ]
    for body, words in refusals:
        answer = await http.post(f"/graphs/{gid}/blueprint", json=body)
        assert answer.status_code == 422 and words in answer.json()["detail"], (body, answer.text)
    same = await http.post(
        f"/graphs/{gid}/blueprint", json={"workflow_id": gid, "new_tasks": [task("x", input_data={})]}
    )
    assert same.status_code == 200, same.text
    assert "x" in status_of(GraphView.model_validate(same.json()))
    assert (await http.post(f"/graphs/{gid}/cancel", json={"reason": "done"})).status_code == 200


async def test_an_unknown_graph_is_404(http: httpx.AsyncClient) -> None:
    gid = "7f0c2a3e-0000-4000-8000-000000000000"
    for response in (
        await http.get(f"/graphs/{gid}"),
        await http.get(f"/graphs/{gid}/diagram"),
        await http.post(f"/graphs/{gid}/pause"),
    ):
        assert response.status_code == 404 and "no graph" in response.json()["detail"], response.text


async def test_a_blueprint_id_where_a_task_uuid_belongs_says_where_uuids_come_from(
    http: httpx.AsyncClient,
) -> None:
    gid = "7f0c2a3e-0000-4000-8000-000000000000"
    for response, where in (
        (
            await http.post(
                f"/graphs/{gid}/interventions",
                json={"intervention_type": "PAUSE", "target_task_id": "count", "comment": "x"},
            ),
            "body.target_task_id",
        ),
        (
            await http.post(f"/graphs/{gid}/blueprint", json={"update_tasks": [{"task_id": "count"}]}),
            "body.update_tasks.0.task_id",
        ),
        (await http.get(f"/graphs/{gid}/tasks/count"), "path.task_uuid"),
    ):
        detail = response.json()["detail"]
        assert response.status_code == 422, response.text
        assert detail.startswith(f"{where}: expected a task's engine UUID, not its blueprint id"), detail
        assert "POST /graphs answers them in `tasks`" in detail and "(got 'count')" in detail, detail
    graph_id = await http.post(f"/graphs/{gid}/blueprint", json={"workflow_id": "count"})
    assert graph_id.status_code == 422, graph_id.text
    assert graph_id.json()["detail"].startswith("body.workflow_id: Input should be a valid UUID"), (
        graph_id.text
    )


async def test_a_failed_graph_is_fixed_and_goes_on_in_its_next_run(
    http: httpx.AsyncClient, client: Client
) -> None:
    created = await submit(
        http,
        {
            "new_tasks": [
                task("charge", input_data={"fail": "card declined"}),
                task("ship", input_data={}),
            ],
            "new_edges": [edge("charge", "ship", data_flow={"mappings": {"paid": "output"}})],
        },
    )
    gid = created["graph_id"]
    failed = await wait_graph(http, gid, lambda v: v.status == "failed", "the graph failed")
    assert status_of(failed) == {"charge": "failed", "ship": "skipped"}
    first_run = (await client.get_workflow_handle(f"graph:{gid}").describe()).run_id
    assert await task_timeout(client, f"graph:{gid}") == GRAPH_TASK_TIMEOUT, "room to replay a long history"
    paused = await http.post(
        f"/graphs/{gid}/interventions",
        json={"intervention_type": "PAUSE", "target_task_id": created["tasks"]["charge"], "comment": "x"},
    )
    assert paused.status_code == 409 and "ROLLBACK_AND_MODIFY a task to reopen it" in paused.json()["detail"]
    fixed = await http.post(
        f"/graphs/{gid}/interventions",
        json={
            "intervention_type": "ROLLBACK_AND_MODIFY",
            "target_task_id": created["tasks"]["charge"],
            "new_input_data": {"fail": False, "echo": "paid by card 2"},
            "comment": "the customer gave another card",
        },
    )
    assert fixed.status_code == 200, fixed.text
    done = await wait_graph(http, gid, lambda v: v.status == "completed", "the reopened graph completed")
    streamed = await collect_events(
        http,
        gid,
        lambda c: isinstance(c.content, GraphFinished) and c.content.status == "completed",
        path=f"/graphs/{gid}/events",
    )
    assert [c.sequence_id for c in streamed] == list(range(len(streamed))), "one stream, both runs, no gap"
    finals = events(streamed, GraphFinished)
    assert [f.status for f in finals] == ["failed", "completed"]
    tasks = {t.task_id: t for t in done.tasks}
    assert (tasks["charge"].version, tasks["charge"].output) == (2, "paid by card 2")
    assert tasks["ship"].output == {"paid": "paid by card 2"}
    handle = client.get_workflow_handle(f"graph:{gid}")
    assert (await handle.describe()).run_id != first_run, "the same workflow id, its next run"
    assert await task_timeout(client, f"graph:{gid}") == GRAPH_TASK_TIMEOUT, "the reopened run too"
    audit = await handle.query(TaskGraphWorkflow.get_audit)
    reopened = next(e for e in audit if e.kind == "reopened")
    comment = reopened.comment or ""
    assert (
        "ROLLBACK_AND_MODIFY of 'charge': the customer gave another card" in comment and first_run in comment
    )
    again = await http.post(
        f"/graphs/{gid}/blueprint",
        json={"update_tasks": [{"task_id": created["tasks"]["ship"], "new_input_data": {"echo": "x"}}]},
    )
    assert again.status_code == 409 and "ROLLBACK_AND_MODIFY" in again.json()["detail"], "nothing reopened"
    extended = await http.post(
        f"/graphs/{gid}/blueprint", json={"new_tasks": [task("invoice", input_data={"echo": "sent"})]}
    )
    assert extended.status_code == 200, extended.text
    final = await wait_graph(
        http,
        gid,
        lambda v: v.status == "completed" and "invoice" in status_of(v),
        "a completed graph extended",
    )
    assert {t.task_id: t.output for t in final.tasks}["invoice"] == "sent"
