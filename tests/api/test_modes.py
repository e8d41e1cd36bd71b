"""Execution modes of `POST /sessions/{key}/messages`: SYNC (`?wait=true`) and ASYNC_STREAM
(`Accept: text/event-stream`), beside INTERACTIVE (202 at once)."""

from __future__ import annotations

from collections.abc import Callable

import httpx

from contracts import TaskChunkType, TurnStarted
from core.client.sse import sse_events

from ..support import chunk_of, event_of, events
from .test_sessions import DELETE_CANCELLED, decide, new_key


async def test_sync_answers_with_the_turns_answer(http: httpx.AsyncClient) -> None:
    key = new_key()
    first = await http.post(
        f"/sessions/{key}/messages",
        params={"wait": "true"},
        json={"content": "SELECT COUNT(*) AS n FROM orders"},
    )
    assert first.status_code == 200, first.text
    body = first.json()
    assert body["status"] == "completed" and body["message_id"].startswith("http-")
    assert body["answer"] == "SELECT returned 1 row:\nn\n8"
    second = await http.post(f"/sessions/{key}/messages", params={"wait": "true"}, json={"content": "hello"})
    assert second.status_code == 200, second.text
    assert 'did not understand "hello"' in str(second.json()["answer"]), (
        "the second call gets its own turn's answer"
    )


async def test_sync_answers_202_with_what_the_turn_waits_for(
    http: httpx.AsyncClient, count_orders: Callable[[str], int]
) -> None:
    key = new_key()
    waiting = await http.post(
        f"/sessions/{key}/messages?wait=true", json={"content": DELETE_CANCELLED, "principal": "alice"}
    )
    assert waiting.status_code == 202, waiting.text
    body = waiting.json()
    assert body["status"] == "waiting"
    pending = body["pending"]
    assert pending["interaction_type"] == "tool_approval" and pending["content"]["tool_params"] == {
        "sql": DELETE_CANCELLED
    }
    decided = await decide(http, key, pending["interaction_id"], approved=True, principal="bob")
    assert decided.status_code == 200 and count_orders("status = 'cancelled'") == 0
    question = await http.post(f"/sessions/{key}/messages?wait=true", json={"content": "ask: Why?"})
    assert question.status_code == 202 and question.json()["pending"]["interaction_type"] == "user_input"


async def test_async_stream_answers_with_the_turns_events_and_ends_with_it(http: httpx.AsyncClient) -> None:
    key = new_key()
    assert (
        await http.post(f"/sessions/{key}/messages?wait=true", json={"content": "hello"})
    ).status_code == 200
    async with http.stream(
        "POST",
        f"/sessions/{key}/messages",
        json={"content": "SELECT customer FROM orders WHERE id = 1"},
        headers={"Accept": "text/event-stream"},
    ) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        chunks = [chunk_of(event) async for event in sse_events(response)]
    kinds = [c.chunk_type for c in chunks]
    assert kinds[0] == TaskChunkType.PROCESSING and event_of(chunks[0], TurnStarted).message.startswith(
        "SELECT"
    )
    assert TaskChunkType.RESPONSE in kinds and kinds[-1] == TaskChunkType.COMPLETE, (
        "the stream ends with the turn"
    )
    assert all(e.message != "hello" for e in events(chunks, TurnStarted)), "only this message's turn"
