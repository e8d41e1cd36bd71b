"""A message to a session that ended: refused when it was cancelled (409: who, when, how to go on),
started again, and said so, when it completed after being idle."""

from __future__ import annotations

import json
from typing import Any

import httpx
from temporalio.client import Client, WorkflowExecutionStatus, WorkflowHandle
from temporalio.common import SearchAttributePair

from activities.tools.sql.database import SEED_ORDERS
from api.calls import sessions
from api.main import create_app
from contracts import InboundMessage, SessionConfig, SessionStatus
from core.agent_registry import DEFAULT_AGENT, load_registry
from core.settings import Settings
from workflows.identity import search_attributes
from workflows.identity.ids import session_workflow_id
from workflows.session import SessionWorkflow
from workflows.session.state import SessionRunInput
from workflows.session.view import start_search_attributes

from ..conftest import assert_eventually
from ..support import serve
from .test_sessions import new_key

SELECT = "SELECT COUNT(*) AS n FROM orders"


async def cancelled_session(http: httpx.AsyncClient) -> str:
    key = new_key()
    assert (await http.post(f"/sessions/{key}/messages", json={"content": SELECT})).status_code == 202
    cancelled = await http.post(f"/sessions/{key}/cancel", json={"reason": "done", "principal": "alice"})
    assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled", cancelled.text
    return key


async def idle_ended_session(client: Client, settings: Settings) -> tuple[str, WorkflowHandle[Any, Any]]:
    """A session that completed after being idle for 1 s: its key and the run that ended."""
    key = new_key()
    agent = load_registry(settings).resolve(DEFAULT_AGENT, key)
    config = SessionConfig(session_key=key, agent=agent, idle_timeout_seconds=1)
    run = await sessions.start_session(client, settings.temporal.task_queue, config)
    await assert_eventually(
        run.describe, lambda d: d.status == WorkflowExecutionStatus.COMPLETED, what="idle for 1 s"
    )
    return key, run


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
    key, _ = await idle_ended_session(client, settings)
    shown = (await http.get(f"/sessions/{key}")).json()
    assert shown["status"] == "completed", shown

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


async def test_an_idle_session_starts_again_by_a_message_that_does_not_wait_too(
    http: httpx.AsyncClient, client: Client, settings: Settings
) -> None:
    key, first = await idle_ended_session(client, settings)

    sent = await http.post(f"/sessions/{key}/messages", json={"content": SELECT})

    assert sent.status_code == 202, sent.text
    assert sent.json()["restarted"] is True, sent.text
    assert sent.json()["note"].startswith(f"session {key!r} had completed after being idle at ")
    assert (
        await client.get_workflow_handle(session_workflow_id(key)).describe()
    ).run_id != first.result_run_id
    await assert_eventually(
        lambda: http.get(f"/sessions/{key}"),
        lambda r: r.json()["messages"][-1:] and r.json()["messages"][-1]["role"] == "assistant",
        what="the new run answering the message",
    )


async def test_a_session_cancelled_and_still_closing_refuses_a_message_it_would_drop(
    client: Client, settings: Settings
) -> None:
    # A session cancelled a moment ago shows `cancelled` while its last deliveries drain; no worker
    # serves this one's queue, so it stays that way while the messages arrive (and the refusal's
    # read of who cancelled it gives up after the API's query wait, shortened here).
    key = new_key()
    config = SessionConfig(session_key=key, agent=load_registry(settings).resolve(DEFAULT_AGENT, key))
    shown = start_search_attributes(config).updated(
        SearchAttributePair(search_attributes.STATUS, SessionStatus.CANCELLED.value)
    )
    handle = await client.start_workflow(
        SessionWorkflow.run,
        SessionRunInput(config=config),
        id=session_workflow_id(key),
        task_queue=f"nobody-{key}",
        search_attributes=shown,
    )

    impatient = settings.model_copy(
        update={"api": settings.api.model_copy(update={"query_wait_seconds": 0.2})}
    )
    async with serve(create_app(impatient, client=client)) as http:
        for params in ({}, {"wait": "true"}):
            refused = await http.post(f"/sessions/{key}/messages", json={"content": SELECT}, params=params)
            assert refused.status_code == 409, (params, refused.text)
            assert f"session {key!r} was cancelled at an unknown time" in refused.json()["detail"]
    assert (await handle.describe()).status == WorkflowExecutionStatus.RUNNING, "no new run"
    await handle.terminate("test over")


async def test_started_by_tells_a_session_started_from_one_signalled(
    client: Client, settings: Settings
) -> None:
    # `deliver` skips the status read only for a run its message started: the SDK's answer says which.
    key = new_key()
    config = SessionConfig(session_key=key, agent=load_registry(settings).resolve(DEFAULT_AGENT, key))

    def message(n: int) -> InboundMessage:
        return InboundMessage(
            channel="http", sender_id="bob", chat_id=key, content=SELECT, message_id=f"m{n}"
        )

    first = await sessions.send_message(client, settings.temporal.task_queue, config, message(1))
    second = await sessions.send_message(client, settings.temporal.task_queue, config, message(2))

    assert (sessions.started_by(first), sessions.started_by(second)) == (True, False)
    assert second.result_run_id == first.result_run_id
    await first.terminate("test over")


async def test_the_openapi_document_names_the_refusal(http: httpx.AsyncClient) -> None:
    operation = (await http.get("/openapi.json")).json()["paths"]["/sessions/{key}/messages"]["post"]
    responses = operation["responses"]
    assert "cancelled" in responses["409"]["description"]
    assert responses["202"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/SessionMessageAccepted"
    }
