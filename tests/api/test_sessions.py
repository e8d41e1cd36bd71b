"""A supervised session end to end: HTTP in, real workflow and worker, SSE out, SQLite changed."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from temporalio.client import Client

from api.main import create_app
from contracts import InteractionRequest, TaskChunkType, TaskStreamChunk, ToolUsed, TurnAnswered
from core.settings import Settings
from tests.conftest import assert_eventually
from workflows.identity import search_attributes
from workflows.identity.ids import session_workflow_id

from ..support import asked, asked_content, collect_events, event_of, events, serve

DELETE_CANCELLED = "DELETE FROM orders WHERE status = 'cancelled'"


def new_key() -> str:
    return f"t-{uuid.uuid4().hex[:10]}"


def is_type(kind: TaskChunkType) -> Callable[[TaskStreamChunk], bool]:
    return lambda chunk: chunk.chunk_type == kind


DEMO_AGENTS = ["Agent:demo", "Agent:demo-adk", "Agent:demo-langgraph", "Agent:demo-autogen"]
"""The same rules on four frameworks: every session scenario must look the same on each."""


async def ask_for_delete(
    http: httpx.AsyncClient, key: str, principal: str = "alice", agent_id: str | None = None
) -> TaskStreamChunk:
    """Send the destructive statement (to a session of `agent_id`); return the approval request chunk."""
    if agent_id is not None:
        created = await http.post("/sessions", json={"session_key": key, "agent_id": agent_id})
        assert created.status_code == 201, created.text
    response = await http.post(
        f"/sessions/{key}/messages", json={"content": DELETE_CANCELLED, "principal": principal}
    )
    assert response.status_code == 202, response.text
    accepted = response.json()
    assert (accepted["session_key"], accepted["workflow_id"], accepted["status"]) == (
        key,
        f"session:{key}",
        "accepted",
    )
    assert accepted["message_id"].startswith("http-")
    # A framework's first step imports it in the worker (google-adk, autogen): seconds on a busy machine.
    chunks = await collect_events(http, key, is_type(TaskChunkType.TOOL_APPROVAL_REQUEST), within=60)
    return chunks[-1]


async def decide(http: httpx.AsyncClient, key: str, interaction_id: str, **body: Any) -> httpx.Response:
    return await http.post(f"/sessions/{key}/interactions/{interaction_id}", json=body)


@pytest.mark.parametrize("agent_id", DEMO_AGENTS)
async def test_approval_applies_the_statement_and_the_agent_reports_it(
    http: httpx.AsyncClient, client: Client, count_orders: Callable[[str], int], agent_id: str
) -> None:
    key = new_key()
    request = await ask_for_delete(http, key, agent_id=agent_id)
    interaction_id = asked(request).interaction_id
    assert asked_content(request)["tool_name"] == "sql"
    assert asked_content(request)["tool_params"] == {"sql": DELETE_CANCELLED}
    assert count_orders("status = 'cancelled'") == 3, "nothing may change before approval"

    status = (await http.get(f"/sessions/{key}")).json()
    assert status["status"] == "waiting_approval"
    assert [p["interaction_id"] for p in status["pending_interactions"]] == [interaction_id]
    description = await client.get_workflow_handle(session_workflow_id(key)).describe()
    assert description.typed_search_attributes.get(search_attributes.STATUS) == "waiting_approval"
    assert description.typed_search_attributes.get(search_attributes.PENDING) == 1

    response = await decide(http, key, interaction_id, approved=True, principal="bob")
    assert response.status_code == 200, response.text
    outcome = response.json()
    assert outcome["approved"] is True
    # the workflow's answer leaves out what the decision says; the API answers with it whole
    assert (outcome["interaction_id"], outcome["decided_by"], outcome["channel"]) == (
        interaction_id,
        "bob",
        "http",
    )
    assert outcome["tool_result"]["ok"] is True
    assert outcome["tool_result"]["content"]["rowcount"] == 3
    assert count_orders("status = 'cancelled'") == 0
    assert count_orders("1=1") == 5

    chunks = await collect_events(
        http, key, is_type(TaskChunkType.COMPLETE), params={"after": request.sequence_id}
    )
    assert chunks[0].sequence_id == request.sequence_id + 1
    [tool_use] = events(chunks, ToolUsed)
    assert tool_use.result.content["rowcount"] == 3
    [answer] = [c for c in chunks if c.chunk_type == TaskChunkType.RESPONSE]
    assert event_of(answer, TurnAnswered).answer == "DELETE done: 3 rows affected."
    final = await http.get(f"/sessions/{key}")
    assert final.json()["status"] == "active"
    assert final.json()["pending_interactions"] == []


@pytest.mark.parametrize("agent_id", DEMO_AGENTS)
async def test_denial_changes_nothing_and_the_agent_reports_the_denial(
    http: httpx.AsyncClient, count_orders: Callable[[str], int], agent_id: str
) -> None:
    key = new_key()
    request = await ask_for_delete(http, key, agent_id=agent_id)
    interaction_id = asked(request).interaction_id
    response = await decide(
        http, key, interaction_id, approved=False, principal="bob", user_message="not today"
    )
    assert response.status_code == 200, response.text
    assert response.json()["approved"] is False
    assert response.json()["tool_result"] is None
    chunks = await collect_events(
        http, key, is_type(TaskChunkType.COMPLETE), params={"after": request.sequence_id}
    )
    [answer] = [c for c in chunks if c.chunk_type == TaskChunkType.RESPONSE]
    assert (
        event_of(answer, TurnAnswered).answer
        == 'I did not run sql: denied by bob (a person denied it) — "not today".'
    )
    assert [c for c in chunks if c.chunk_type == TaskChunkType.TOOL_USE] == []
    assert count_orders("status = 'cancelled'") == 3
    audit = (await http.get(f"/sessions/{key}/audit")).json()["entries"]
    assert [(e["kind"], e["principal"], e["comment"]) for e in audit] == [
        ("requested", "alice", f"sql: {DELETE_CANCELLED}"),
        ("denied", "bob", "not today"),
    ]


async def test_a_select_runs_without_approval(http: httpx.AsyncClient) -> None:
    key = new_key()
    response = await http.post(
        f"/sessions/{key}/messages", json={"content": "SELECT customer FROM orders WHERE id = 1"}
    )
    assert response.status_code == 202
    chunks = await collect_events(http, key, is_type(TaskChunkType.COMPLETE))
    kinds = [c.chunk_type for c in chunks]
    assert TaskChunkType.TOOL_APPROVAL_REQUEST not in kinds
    [answer] = [c for c in chunks if c.chunk_type == TaskChunkType.RESPONSE]
    assert event_of(answer, TurnAnswered).answer == "SELECT returned 1 row:\ncustomer\nAlice"


async def test_each_approval_is_its_own_short_update_answered_whole_and_written_compact(
    http: httpx.AsyncClient, client: Client, count_orders: Callable[[str], int]
) -> None:
    """Two approvals in one session both apply and answer with their results; each is an update
    of its own whose id (the API's, written into the history with it) is 16 characters."""
    key = new_key()
    answers, after = [], 0
    for principal in ("bob", "carol"):
        sent = await http.post(f"/sessions/{key}/messages", json={"content": DELETE_CANCELLED})
        assert sent.status_code == 202, sent.text
        chunks = await collect_events(
            http, key, is_type(TaskChunkType.TOOL_APPROVAL_REQUEST), params={"after": after}
        )
        request = chunks[-1]
        response = await decide(http, key, asked(request).interaction_id, approved=True, principal=principal)
        assert response.status_code == 200, response.text
        answers.append(response.json())
        done = await collect_events(
            http, key, is_type(TaskChunkType.COMPLETE), params={"after": request.sequence_id}
        )
        after = done[-1].sequence_id

    assert [
        (a["interaction_id"], a["decided_by"], a["tool_result"]["content"]["rowcount"]) for a in answers
    ] == [
        ("tool_1", "bob", 3),
        ("tool_2", "carol", 0),
    ]
    history = await client.get_workflow_handle(session_workflow_id(key)).fetch_history()
    accepted = [
        event.workflow_execution_update_accepted_event_attributes.accepted_request
        for event in history.events
        if event.HasField("workflow_execution_update_accepted_event_attributes")
    ]
    ids = [request.meta.update_id for request in accepted if request.input.name == "decide_checked"]
    assert len(ids) == 2 and len(set(ids)) == 2, ids
    assert all(len(update_id) == 16 for update_id in ids), ids
    assert all(len(request.meta.update_id) == 16 for request in accepted), "the stream's watches too"
    assert count_orders("status = 'cancelled'") == 0
    # The history keeps the workflow's answers without what the decision said (the API answered
    # with it whole, above) and the SQL results without their empty fields.
    written = [
        json.loads(
            event.workflow_execution_update_completed_event_attributes.outcome.success.payloads[0].data
        )
        for event in history.events
        if event.HasField("workflow_execution_update_completed_event_attributes")
        and event.workflow_execution_update_completed_event_attributes.meta.update_id in ids
    ]
    assert [sorted(answer) for answer in written] == [
        ["approvals", "approved", "complete", "decided_at", "tool_result"]
    ] * 2, written
    assert [answer["tool_result"]["content"] for answer in written] == [
        {"rowcount": 3, "statement": "DELETE"},
        {"rowcount": 0, "statement": "DELETE"},
    ]


async def test_decision_errors_have_the_documented_statuses(http: httpx.AsyncClient) -> None:
    key = new_key()
    request = await ask_for_delete(http, key)
    interaction_id = asked(request).interaction_id

    unknown = await decide(http, key, "tool_99", approved=True)
    assert unknown.status_code == 404
    assert "tool_99" in unknown.json()["detail"] and interaction_id in unknown.json()["detail"]

    no_session = await decide(http, new_key(), interaction_id, approved=True)
    assert no_session.status_code == 404

    extra = await decide(http, key, interaction_id, approved=True, sudo=True)
    assert extra.status_code == 422
    assert "sudo" in extra.json()["detail"]

    wrong_type = await decide(http, key, interaction_id, approved="perhaps")
    assert wrong_type.status_code == 422
    assert "approved" in wrong_type.json()["detail"]

    mismatch = await http.post(
        f"/sessions/{key}/interactions/{interaction_id}", json={"approved": True, "interaction_id": "tool_7"}
    )
    assert mismatch.status_code == 422

    first = await decide(http, key, interaction_id, approved=False, principal="bob")
    assert first.status_code == 200
    second = await decide(http, key, interaction_id, approved=True, principal="carol")
    assert second.status_code == 409
    assert "already denied by bob" in second.json()["detail"]


async def test_only_allowed_approvers_decide(http: httpx.AsyncClient) -> None:
    key = new_key()
    created = await http.post("/sessions", json={"session_key": key, "approvers": ["carol"]})
    assert created.status_code == 201, created.text
    assert created.json()["approvers"] == ["carol"]
    again = await http.post("/sessions", json={"session_key": key})
    assert again.status_code == 409
    request = await ask_for_delete(http, key)
    interaction_id = asked(request).interaction_id
    assert asked(request).approvers == ["carol"]

    refused = await decide(http, key, interaction_id, approved=True, principal="mallory")
    assert refused.status_code == 403
    assert "mallory" in refused.json()["detail"] and "carol" in refused.json()["detail"]
    accepted = await decide(http, key, interaction_id, approved=True, principal="carol")
    assert accepted.status_code == 200


async def test_bad_bodies_and_keys_are_422_never_500(http: httpx.AsyncClient) -> None:
    key = new_key()
    empty = await http.post(f"/sessions/{key}/messages", json={"content": ""})
    assert empty.status_code == 422 and "content" in empty.json()["detail"]
    extra = await http.post(f"/sessions/{key}/messages", json={"content": "hi", "admin": True})
    assert extra.status_code == 422 and "admin" in extra.json()["detail"]
    not_json = await http.post(
        f"/sessions/{key}/messages", content=b"{nope", headers={"content-type": "application/json"}
    )
    assert not_json.status_code == 422
    bad_key = await http.post("/sessions/bad key!/messages", json={"content": "hi"})
    assert bad_key.status_code == 422
    bad_timeout = await http.post("/sessions", json={"approval_timeout_seconds": 0})
    assert bad_timeout.status_code == 422 and "approval_timeout_seconds" in bad_timeout.json()["detail"]
    assert (await http.get(f"/sessions/{new_key()}")).status_code == 404
    assert (await http.get(f"/sessions/{new_key()}/events")).status_code == 404
    assert (await http.post(f"/sessions/{new_key()}/pause")).status_code == 404


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        ("/sessions", {"question_timeout_seconds": True}, "question_timeout_seconds"),
        ("/sessions", {"approval_timeout_seconds": "60"}, "approval_timeout_seconds"),
        ("/sessions", {"policies": {"sql": {"approvals_required": True}}}, "approvals_required"),
        ("/sessions", {"policies": {"sql": {"allow_grants": "no"}}}, "allow_grants"),
        ("/rules", {"tool": "sql", "decision": "allow", "match": {"writes": 0}}, "writes"),
        (
            "/graphs",
            {"blueprint": {"new_tasks": [{"task_id": "a", "directives": {"timeout_seconds": True}}]}},
            "timeout_seconds",
        ),
    ],
)
async def test_numbers_and_switches_must_be_json_numbers_and_booleans(
    http: httpx.AsyncClient, path: str, body: dict[str, Any], field: str
) -> None:
    """`true` is not 1 and "60" is not 60: what the schema calls an integer or a boolean is taken
    only as one (pydantic alone would convert them; `make fuzz` found it)."""
    refused = await http.post(path, json=body)
    assert refused.status_code == 422, refused.text
    assert field in refused.json()["detail"]


async def test_a_decision_of_1_is_refused_and_the_request_still_waits(http: httpx.AsyncClient) -> None:
    key = new_key()
    interaction_id = asked(await ask_for_delete(http, key)).interaction_id
    for approved in (1, "true", "yes"):
        refused = await decide(http, key, interaction_id, approved=approved)
        assert refused.status_code == 422 and "approved" in refused.json()["detail"], refused.text
    session = (await http.get(f"/sessions/{key}")).json()
    assert [p["interaction_id"] for p in session["pending_interactions"]] == [interaction_id]
    assert (await decide(http, key, interaction_id, approved=True)).status_code == 200


async def test_an_unknown_agent_is_refused_at_submission(http: httpx.AsyncClient) -> None:
    response = await http.post("/sessions", json={"agent_id": "Agent:ghost"})
    assert response.status_code == 422
    assert "'Agent:ghost' is not declared" in response.json()["detail"]
    assert "Agent:demo-langgraph" in response.json()["detail"]


async def test_the_deployments_approval_timeout_applies_to_sessions_that_do_not_say(
    client: Client, settings: Settings, worker: None
) -> None:
    hours = settings.model_copy(
        update={"api": settings.api.model_copy(update={"approval_timeout_seconds": 7200})}
    )
    async with serve(create_app(hours, client=client)) as http:

        async def waits(key: str) -> float:
            pending = await assert_eventually(
                lambda: http.get(f"/sessions/{key}"),
                lambda r: bool(r.json()["pending_interactions"]),
                what=f"{key} waiting for approval",
            )
            request = InteractionRequest.model_validate(pending.json()["pending_interactions"][0])
            assert request.expires_at is not None
            return (request.expires_at - request.timestamp).total_seconds()

        by_message = new_key()
        assert (
            await http.post(f"/sessions/{by_message}/messages", json={"content": DELETE_CANCELLED})
        ).is_success
        created, own = new_key(), new_key()
        assert (await http.post("/sessions", json={"session_key": created})).is_success
        assert (
            await http.post("/sessions", json={"session_key": own, "approval_timeout_seconds": 60})
        ).is_success
        for key in (created, own):
            assert (
                await http.post(f"/sessions/{key}/messages", json={"content": DELETE_CANCELLED})
            ).is_success

        assert await waits(by_message) == 7200, "a session a message starts"
        assert await waits(created) == 7200, "a session created without a timeout"
        assert await waits(own) == 60, "a session's own timeout wins"


async def test_a_chats_session_key_is_started_by_its_chat_not_over_http(http: httpx.AsyncClient) -> None:
    """`lark:` and `dingtalk:` keys belong to their channels: over HTTP a session of such a key is
    neither started (it would run without the chat's approvers) nor started by a first message."""
    for key in ("lark:oc_taken", "dingtalk:cidTaken"):
        created = await http.post("/sessions", json={"session_key": key, "approvers": []})
        assert created.status_code == 422 and "belong to the" in created.json()["detail"], created.text
        sent = await http.post(f"/sessions/{key}/messages", json={"content": "hi", "principal": "otto"})
        assert sent.status_code == 404 and "started by its chat" in sent.json()["detail"], sent.text
        assert (await http.get(f"/sessions/{key}")).status_code == 404, "nothing was started"
