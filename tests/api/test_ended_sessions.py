"""A message to a session that ended: refused when it was cancelled (409: who, when, how to go on),
started again, and said so, when it completed after being idle."""

from __future__ import annotations

import json

import httpx
from temporalio.client import Client, WorkflowExecutionStatus

from activities.tools.sql.database import SEED_ORDERS
from api.calls import sessions
from contracts import SessionConfig
from core.agent_registry import DEFAULT_AGENT, load_registry
from core.settings import Settings
from workflows.identity.ids import session_workflow_id

from ..conftest import assert_eventually
from .test_sessions import new_key

SELECT = "SELECT COUNT(*) AS n FROM orders"


async def cancelled_session(http: httpx.AsyncClient) -> str:
    key = new_key()
    assert (await http.post(f"/sessions/{key}/messages", json={"content": SELECT})).status_code == 202
    cancelled = await http.post(f"/sessions/{key}/cancel", json={"reason": "done", "principal": "alice"})
    assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled", cancelled.text
    return key


async def test_a_message_to_a_cancelled_session_is_refused_and_says_how_to_go_on(
    http: httpx.AsyncClient, client: Client
) -> None:
    key = await cancelled_session(http)
    handle = client.get_workflow_handle(session_workflow_id(key))
    run_id = (await handle.describe()).run_id

    for params, headers in (({}, {}), ({"wait": "true"}, {}), ({}, {"accept": "text/event-stream"})):
        refused = await http.post(
            f"/sessions/{key}/messages", json={"content": SELECT}, params=params, headers=headers
        )
        assert refused.status_code == 409, (params, headers, refused.text)
        detail = refused.json()["detail"]
        assert f"session {key!r} was cancelled by alice at " in detail and " UTC (done)" in detail
        assert "Use another session key" in detail
        assert f"POST /sessions {json.dumps({'session_key': key})}" in detail

    after = await handle.describe()
    assert (after.run_id, after.status) == (run_id, WorkflowExecutionStatus.COMPLETED), "no new run started"
    assert (await http.get(f"/sessions/{key}")).json()["status"] == "cancelled"

    again = await http.post("/sessions", json={"session_key": key})  # the call the refusal names
    assert again.status_code == 201 and again.json()["status"] == "active", again.text
    sent = await http.post(f"/sessions/{key}/messages", json={"content": SELECT})
    assert sent.status_code == 202 and sent.json()["restarted"] is False, sent.text


async def test_a_session_cancelled_through_temporal_is_refused_too(
    http: httpx.AsyncClient, client: Client
) -> None:
    key = new_key()
    assert (await http.post("/sessions", json={"session_key": key})).status_code == 201
    handle = client.get_workflow_handle(session_workflow_id(key))
    await handle.cancel()
    await assert_eventually(
        handle.describe, lambda d: d.status == WorkflowExecutionStatus.CANCELED, what="cancelled in Temporal"
    )

    refused = await http.post(f"/sessions/{key}/messages", json={"content": SELECT})

    assert refused.status_code == 409, refused.text
    assert f"session {key!r} was cancelled at " in refused.json()["detail"]


async def test_an_idle_session_starts_again_and_the_answer_says_so(
    http: httpx.AsyncClient, client: Client, settings: Settings
) -> None:
    key = new_key()
    agent = load_registry(settings).resolve(DEFAULT_AGENT, key)
    config = SessionConfig(session_key=key, agent=agent, idle_timeout_seconds=1)
    await sessions.start_session(client, settings.temporal.task_queue, config)
    await assert_eventually(
        lambda: http.get(f"/sessions/{key}"),
        lambda r: r.status_code == 200 and r.json()["status"] == "completed",
        what="the session completing after 1 s idle",
    )

    sent = await http.post(f"/sessions/{key}/messages", params={"wait": "true"}, json={"content": SELECT})

    assert sent.status_code == 200, sent.text
    body = sent.json()
    assert body["restarted"] is True and body["status"] == "completed"
    assert body["note"].startswith(f"session {key!r} had completed after being idle at ")
    assert "new conversation" in body["note"]
    assert body["answer"] == f"SELECT returned 1 row:\nn\n{len(SEED_ORDERS)}", (
        "the new run answered the message, from its own stream"
    )
    running = (await http.get(f"/sessions/{key}")).json()
    assert [m["role"] for m in running["messages"]][:1] == ["user"], "a new conversation"
    next_one = await http.post(f"/sessions/{key}/messages", json={"content": SELECT})
    assert next_one.status_code == 202 and next_one.json()["restarted"] is False
    assert "note" not in next_one.json()


async def test_the_openapi_document_names_the_refusal(http: httpx.AsyncClient) -> None:
    operation = (await http.get("/openapi.json")).json()["paths"]["/sessions/{key}/messages"]["post"]
    responses = operation["responses"]
    assert "cancelled" in responses["409"]["description"]
    assert responses["202"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/SessionMessageAccepted"
    }
