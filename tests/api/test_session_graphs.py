"""A session whose agent proposes a plan runs it as a child graph, relays its requests, answers with its outputs."""

from __future__ import annotations

import json
import uuid
from typing import Any

import httpx
from temporalio.client import Client

from contracts import DecisionTaken, GraphStarted, TaskChanged, TaskChunkType, TurnAnswered
from workflows.graph.state import GRAPH_TASK_TIMEOUT

from ..conftest import assert_eventually
from ..support import asked, asked_content, collect_events, events
from ..workflows.graph.flows import edge, task, task_timeout


def plan_message(blueprint: dict[str, Any]) -> str:
    return "plan: " + json.dumps(blueprint)


BLUEPRINT = {
    "new_tasks": [
        task("collect", input_data={"echo": {"total": 42}}),
        task("publish", input_data={}, directives={"human_interaction": {"prompt": "Publish the total?"}}),
    ],
    "new_edges": [edge("collect", "publish", data_flow={"mappings": {"total": "output.total"}})],
}


async def test_a_plan_runs_as_a_child_graph_whose_gate_is_decided_over_http(
    http: httpx.AsyncClient, client: Client
) -> None:
    key = f"plan-{uuid.uuid4().hex[:8]}"
    sent = await http.post(
        f"/sessions/{key}/messages", json={"content": plan_message(BLUEPRINT), "principal": "alice"}
    )
    assert sent.status_code == 202
    chunks = await collect_events(
        http, key, lambda c: c.chunk_type == TaskChunkType.TOOL_APPROVAL_REQUEST, within=30
    )
    [started] = events(chunks, GraphStarted)
    graph_id = started.graph_id
    assert started.tasks == ["collect", "publish"]
    progress = events(chunks, TaskChanged)
    assert [p.status for p in progress if p.task_id == "collect"][-1:] == ["completed"]
    assert [p for p in progress if p.task_id == "publish" and p.status == "completed"] == [], (
        "the gated task has not run"
    )
    assert {p.graph for p in progress} == {f"graph:{graph_id}"}, "each change names the graph it is of"
    gate = chunks[-1]
    assert asked_content(gate)["prompt"] == "Publish the total?"
    assert asked(gate).workflow_id == f"graph:{graph_id}"
    assert await task_timeout(client, f"graph:{graph_id}") == GRAPH_TASK_TIMEOUT, "room to replay"
    decided = await http.post(
        f"/graphs/{graph_id}/interactions/{asked(gate).interaction_id}",
        json={"approved": True, "principal": "bob"},
    )
    assert decided.status_code == 200, decided.text
    after = await collect_events(
        http,
        key,
        lambda c: c.chunk_type == TaskChunkType.COMPLETE,
        params={"after": str(gate.sequence_id)},
        within=30,
    )
    answer = events(after, TurnAnswered)[0].answer
    assert answer == {"graph_id": graph_id, "status": "completed", "outputs": {"publish": {"total": 42}}}
    session = (await http.get(f"/sessions/{key}")).json()
    assert session["status"] == "active" and session["messages"][-1]["content"]["outputs"] == {
        "publish": {"total": 42}
    }


async def test_a_chat_reply_decides_the_graph_gate_and_a_denial_skips_it(http: httpx.AsyncClient) -> None:
    key = f"plan-{uuid.uuid4().hex[:8]}"
    await http.post(
        f"/sessions/{key}/messages", json={"content": plan_message(BLUEPRINT), "principal": "alice"}
    )
    chunks = await collect_events(
        http, key, lambda c: c.chunk_type == TaskChunkType.TOOL_APPROVAL_REQUEST, within=30
    )
    replied = await http.post(f"/sessions/{key}/messages", json={"content": "取消", "principal": "alice"})
    assert replied.status_code == 202
    after = await collect_events(
        http,
        key,
        lambda c: c.chunk_type == TaskChunkType.COMPLETE,
        params={"after": str(chunks[-1].sequence_id)},
        within=30,
    )
    answer = events(after, TurnAnswered)[0].answer
    assert isinstance(answer, dict) and answer["status"] == "completed" and answer["outputs"] == {}
    graph = (await http.get(f"/graphs/{answer['graph_id']}")).json()
    publish = next(t for t in graph["tasks"] if t["task_id"] == "publish")
    assert publish["status"] == "skipped" and publish["reason"] == "its gate was denied by alice"


QUESTIONING = {
    "new_tasks": [task("ask", input_data={"ask": "Which region?"})],
}


async def test_a_relayed_gate_is_listed_and_decided_at_the_session_like_its_own(
    http: httpx.AsyncClient,
) -> None:
    """The graph's gate shows among the session's pending requests, answers a decision sent to the
    session (it is taken where it was asked), and the audit of both says who decided."""
    key = f"plan-{uuid.uuid4().hex[:8]}"
    await http.post(
        f"/sessions/{key}/messages", json={"content": plan_message(BLUEPRINT), "principal": "alice"}
    )
    chunks = await collect_events(
        http, key, lambda c: c.chunk_type == TaskChunkType.TOOL_APPROVAL_REQUEST, within=30
    )
    gate = chunks[-1]
    session = (await http.get(f"/sessions/{key}")).json()
    [listed] = session["pending_interactions"]
    assert (listed["interaction_id"], listed["task_id"]) == (
        asked(gate).interaction_id,
        asked(gate).workflow_id,
    )
    assert listed["ask"]["kind"] == "gate" and listed["requested_by"] == "alice", "the gate names who asked"
    decided = await http.post(
        f"/sessions/{key}/interactions/{asked(gate).interaction_id}",
        json={"approved": True, "principal": "bob"},
    )
    assert decided.status_code == 200, decided.text
    assert (decided.json()["decided_by"], decided.json()["channel"]) == ("bob", "http")
    after = await collect_events(
        http,
        key,
        lambda c: c.chunk_type == TaskChunkType.COMPLETE,
        params={"after": str(gate.sequence_id)},
        within=30,
    )
    answer = events(after, TurnAnswered)[0].answer
    assert isinstance(answer, dict) and answer["outputs"] == {"publish": {"total": 42}}
    shown = events(after, DecisionTaken)
    assert shown and shown[0].decided_by == "bob", "the session's stream shows the relayed decision"
    assert shown[0].workflow_id == asked(gate).workflow_id, "it names the graph that asked"
    graph_audit = (await http.get(f"/graphs/{answer['graph_id']}/audit")).json()["entries"]
    assert [
        (e["kind"], e["principal"], e["channel"])
        for e in graph_audit
        if e["kind"] in ("requested", "approved")
    ] == [
        ("requested", "alice", "http"),
        ("approved", "bob", "http"),
    ]


async def test_a_chat_reply_to_a_relayed_gate_with_wait_ends_with_the_turn(http: httpx.AsyncClient) -> None:
    key = f"plan-{uuid.uuid4().hex[:8]}"
    await http.post(
        f"/sessions/{key}/messages", json={"content": plan_message(BLUEPRINT), "principal": "alice"}
    )
    await collect_events(http, key, lambda c: c.chunk_type == TaskChunkType.TOOL_APPROVAL_REQUEST, within=30)
    denied = await http.post(
        f"/sessions/{key}/messages", params={"wait": "true"}, json={"content": "不要", "principal": "mallory"}
    )
    assert denied.json()["status"] == "completed", denied.text  # a denial ends the gate, and then the turn
    assert denied.json()["answer"]["outputs"] == {}
    graph = (await http.get(f"/graphs/{denied.json()['answer']['graph_id']}")).json()
    publish = next(t for t in graph["tasks"] if t["task_id"] == "publish")
    assert publish["reason"] == "its gate was denied by mallory"


async def test_a_chat_answer_to_a_relayed_question_is_the_answer_not_a_verdict(
    http: httpx.AsyncClient,
) -> None:
    """A task's question reached through the session is answered with the whole text (not read as
    approve or deny: `不知道` holds a negation and would deny)."""
    key = f"plan-{uuid.uuid4().hex[:8]}"
    await http.post(
        f"/sessions/{key}/messages", json={"content": plan_message(QUESTIONING), "principal": "alice"}
    )
    chunks = await collect_events(
        http, key, lambda c: c.chunk_type == TaskChunkType.TOOL_APPROVAL_REQUEST, within=30
    )
    assert asked(chunks[-1]).interaction_type == "user_input", chunks[-1]
    answered = await http.post(
        f"/sessions/{key}/messages",
        params={"wait": "true"},
        json={"content": "不知道，eu-west", "principal": "alice"},
    )
    assert answered.status_code == 200, answered.text
    assert "不知道，eu-west" in json.dumps(answered.json()["answer"], ensure_ascii=False), answered.text


async def test_a_plan_sent_with_wait_shows_its_gate_everywhere_and_a_chat_yes_ends_the_turn(
    http: httpx.AsyncClient,
) -> None:
    """The reported path: the plan's turn waits (202) on the graph's gate; that gate is the one the
    session lists, and a chat approval with `?wait=true` ends its
    turn with the graph's outputs (recorded as the approver's, through the HTTP door it came by)."""
    key = f"plan-{uuid.uuid4().hex[:8]}"
    waiting = await http.post(
        f"/sessions/{key}/messages",
        params={"wait": "true"},
        json={"content": plan_message(BLUEPRINT), "principal": "alice"},
    )
    assert waiting.status_code == 202 and waiting.json()["status"] == "waiting", waiting.text
    gate = waiting.json()["pending"]
    assert gate["ask"]["kind"] == "gate" and gate["task_id"].startswith("graph:"), gate
    listed = (await http.get(f"/sessions/{key}")).json()["pending_interactions"]
    assert [r["interaction_id"] for r in listed] == [gate["interaction_id"]]
    approved = await http.post(
        f"/sessions/{key}/messages", params={"wait": "true"}, json={"content": "好的", "principal": "bob"}
    )
    assert approved.status_code == 200 and approved.json()["status"] == "completed", approved.text
    assert approved.json()["answer"]["outputs"] == {"publish": {"total": 42}}
    assert (await http.get(f"/sessions/{key}")).json()["pending_interactions"] == []
    audit = (await http.get(f"/graphs/{approved.json()['answer']['graph_id']}/audit")).json()["entries"]
    assert [(e["principal"], e["channel"]) for e in audit if e["kind"] == "approved"] == [("bob", "http")]


async def test_the_graph_list_names_a_sessions_graph_by_its_session(http: httpx.AsyncClient) -> None:
    key = f"plan-{uuid.uuid4().hex[:8]}"
    sent = await http.post(f"/sessions/{key}/messages", json={"content": plan_message(BLUEPRINT)})
    assert sent.status_code == 202
    chunks = await collect_events(http, key, lambda c: isinstance(c.content, GraphStarted), within=30)
    [started] = events(chunks, GraphStarted)
    await assert_eventually(  # Temporal's visibility lists it a moment later
        lambda: http.get("/graphs", params={"limit": 500}),
        lambda got: (
            [g["title"] for g in got.json() if g["graph_id"] == started.graph_id] == [f"from session:{key}"]
        ),
        what="the session's graph listed as from its session",
    )
