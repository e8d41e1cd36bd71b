"""A graph Temporal ended while it ran (terminated, timed out) reads as it ended, with how, in
`GET /graphs/{id}`, its tasks and the listing; its gates are withdrawn and a decision on one is a
409 saying so; a rollback or a blueprint reopens it from its last good state (what completed
stays, what was interrupted runs again, each gate asks again) and it completes."""

from __future__ import annotations

import uuid
from datetime import timedelta
from typing import Any

import httpx
from temporalio.client import Client, WorkflowExecutionStatus

from contracts import GraphConfig, GraphView, PlanBlueprint
from core.settings import Settings
from workflows.graph import TaskGraphWorkflow
from workflows.graph.state import GRAPH_TASK_TIMEOUT, GraphRunInput
from workflows.graph.view import start_search_attributes
from workflows.identity.ids import graph_workflow_id, task_run_workflow_id

from ..conftest import assert_eventually
from ..workflows.graph.flows import edge, gated, task
from .test_graphs import graph, status_of, submit, wait_graph

REASON = "stuck behind a dead dependency"


def by_id(view: GraphView) -> dict[str, Any]:
    return {t.task_id: t for t in view.tasks}


async def listed(http: httpx.AsyncClient, graph_id: str, **params: Any) -> dict[str, Any] | None:
    response = await http.get("/graphs", params={"limit": 500, **params})
    assert response.status_code == 200, response.text
    return next((g for g in response.json() if g["graph_id"] == graph_id), None)


async def decide(http: httpx.AsyncClient, graph_id: str, interaction_id: str) -> httpx.Response:
    return await http.post(
        f"/graphs/{graph_id}/interactions/{interaction_id}", json={"approved": True, "principal": "olga"}
    )


async def test_a_terminated_graph_reads_terminated_and_a_rollback_reopens_it_from_its_last_good_state(
    http: httpx.AsyncClient, client: Client
) -> None:
    created = await submit(
        http,
        {
            "new_tasks": [
                task("fetch", input_data={"echo": "rows"}),
                {**gated("publish"), "input_data": {}},
                task("crunch", input_data={"sleep_seconds": 300}),
                task("report", input_data={}),
            ],
            "new_edges": [
                edge("fetch", "publish", data_flow={"mappings": {"rows": "output"}}),
                edge("crunch", "report", data_flow={"mappings": {"numbers": "output"}}),
            ],
        },
    )
    gid, uuids = created["graph_id"], created["tasks"]
    going = await wait_graph(
        http,
        gid,
        lambda v: (
            status_of(v)
            == {"fetch": "completed", "publish": "waiting", "crunch": "running", "report": "pending"}
            and len(v.pending_interactions) == 1
        ),
        "publish at its gate, crunch running",
    )
    gate = going.pending_interactions[0].interaction_id
    handle = client.get_workflow_handle(graph_workflow_id(gid))
    await handle.terminate(reason=REASON)

    ended = await graph(http, gid)
    assert ended.status == "terminated" and REASON in (ended.reason or ""), ended
    assert "ROLLBACK_AND_MODIFY" in (ended.reason or "") and ended.finished_at is not None
    assert ended.pending_interactions == [], "its gate is withdrawn"
    assert status_of(ended) == {
        "fetch": "completed",
        "publish": "cancelled",
        "crunch": "cancelled",
        "report": "pending",
    }
    assert "interrupted" in (by_id(ended)["crunch"].reason or "") and REASON in (
        by_id(ended)["crunch"].reason or ""
    )
    assert ended.counts == {"completed": 1, "cancelled": 2, "pending": 1}
    crunch = (await http.get(f"/graphs/{gid}/tasks/{uuids['crunch']}")).json()
    assert (crunch["status"], crunch["versions"][-1]["status"]) == ("cancelled", "cancelled"), crunch

    summary = await listed(http, gid)
    assert summary is not None and summary["status"] == "terminated" and summary["closed"], summary
    assert REASON in summary["reason"] and summary["pending"] == 0, summary
    assert await listed(http, gid, status="terminated") is not None
    assert await listed(http, gid, status="running") is None, "never listed as running"

    refused = await decide(http, gid, gate)
    assert refused.status_code == 409, refused.text
    detail = refused.json()["detail"]
    assert "was terminated" in detail and REASON in detail and "withdrawn" in detail, detail
    cancelled = await http.post(f"/graphs/{gid}/cancel", json={"principal": "olga"})
    assert cancelled.status_code == 409 and "was terminated" in cancelled.json()["detail"], cancelled.text

    fixed = await http.post(
        f"/graphs/{gid}/interventions",
        json={
            "intervention_type": "ROLLBACK_AND_MODIFY",
            "target_task_id": uuids["crunch"],
            "new_input_data": {"sleep_seconds": 0, "echo": [1, 2, 3]},
            "comment": "without the dead dependency",
        },
    )
    assert fixed.status_code == 200, fixed.text
    asking = await wait_graph(
        http,
        gid,
        lambda v: v.status == "running" and any(r.interaction_id != gate for r in v.pending_interactions),
        "publish asks again",
    )
    assert [r.interaction_id for r in asking.pending_interactions] != [gate]
    again = await decide(http, gid, gate)
    assert again.status_code == 409 and "system:ended" in again.json()["detail"], again.text
    approved = await decide(http, gid, asking.pending_interactions[0].interaction_id)
    assert approved.status_code == 200, approved.text

    done = await wait_graph(http, gid, lambda v: v.status == "completed", "the reopened graph completed")
    tasks = by_id(done)
    assert {name: (t.version, t.output) for name, t in tasks.items()} == {
        "fetch": (1, "rows"),  # completed before: kept, not run again
        "publish": (1, {"rows": "rows"}),  # its interrupted wait never ran it: its first run
        "crunch": (2, [1, 2, 3]),
        "report": (1, {"numbers": [1, 2, 3]}),
    }
    old_run = client.get_workflow_handle(task_run_workflow_id(graph_workflow_id(gid), uuids["crunch"], 1))
    await assert_eventually(
        old_run.describe,
        lambda d: d.status == WorkflowExecutionStatus.CANCELED,
        what="crunch's interrupted run, which outlived its graph, cancelled",
    )
    audit = (await http.get(f"/graphs/{gid}/audit")).json()["entries"]
    assert any(e["kind"] == "reopened" and REASON in e["comment"] for e in audit), audit
    assert any(
        e["kind"] == "denied" and e["principal"] == "system:ended" and e["interaction_id"] == gate
        for e in audit
    )


async def test_a_timed_out_graph_reads_timed_out_and_a_blueprint_reopens_it(
    http: httpx.AsyncClient, client: Client, settings: Settings
) -> None:
    graph_id = str(uuid.uuid4())
    config = GraphConfig(graph_id=graph_id, requested_by="alice")
    blueprint = PlanBlueprint.model_validate({"new_tasks": [gated("deploy")], "new_edges": []})
    run = GraphRunInput(config=config, blueprint=blueprint, task_uuids={"deploy": str(uuid.uuid4())})
    handle = await client.start_workflow(
        TaskGraphWorkflow.run,
        run,
        id=graph_workflow_id(graph_id),
        task_queue=settings.temporal.task_queue,
        task_timeout=GRAPH_TASK_TIMEOUT,
        execution_timeout=timedelta(seconds=3),  # only here: Synapse starts graphs without one
        search_attributes=start_search_attributes(config),
    )
    first = await wait_graph(http, graph_id, lambda v: len(v.pending_interactions) == 1, "deploy at its gate")
    await assert_eventually(
        handle.describe, lambda d: d.status == WorkflowExecutionStatus.TIMED_OUT, within=30, what="timed out"
    )

    ended = await graph(http, graph_id)
    assert ended.status == "timed_out" and "execution timeout" in (ended.reason or ""), ended
    assert ended.pending_interactions == [] and status_of(ended) == {"deploy": "cancelled"}
    summary = await listed(http, graph_id, status="timed_out")
    assert (
        summary is not None and summary["status"] == "timed_out" and "execution timeout" in summary["reason"]
    )
    refused = await decide(http, graph_id, first.pending_interactions[0].interaction_id)
    assert refused.status_code == 409 and "timed out at" in refused.json()["detail"], refused.text

    extended = await http.post(
        f"/graphs/{graph_id}/blueprint", json={"new_tasks": [task("notify", input_data={"echo": "sent"})]}
    )
    assert extended.status_code == 200, extended.text
    asking = await wait_graph(
        http,
        graph_id,
        lambda v: v.status == "running" and len(v.pending_interactions) == 1,
        "deploy asks again",
    )
    assert asking.pending_interactions[0].interaction_id != first.pending_interactions[0].interaction_id
    approved = await decide(http, graph_id, asking.pending_interactions[0].interaction_id)
    assert approved.status_code == 200, approved.text
    done = await wait_graph(http, graph_id, lambda v: v.status == "completed", "the reopened graph completed")
    assert {t.task_id: t.output for t in done.tasks} == {"deploy": "deploy", "notify": "sent"}
