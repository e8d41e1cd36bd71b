"""Limits at the door: too large is a 413 naming the limit, nothing is signalled, nothing wedges."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import httpx
import pytest
from temporalio.client import Client

from api.main import create_app
from contracts import TaskChunkType, TurnAnswered
from core.settings import LimitSettings, Settings

from ..support import collect_events, events, serve

MB = 1024 * 1024


def new_key() -> str:
    return f"big-{uuid.uuid4().hex[:10]}"


async def answered(http: httpx.AsyncClient, key: str, content: str, after: int | None = None) -> str:
    """Send `content` and return the text of the session's RESPONSE to it."""
    response = await http.post(f"/sessions/{key}/messages", json={"content": content})
    assert response.status_code == 202, response.text
    params = {"after": str(after)} if after is not None else None
    chunks = await collect_events(
        http, key, lambda c: c.chunk_type == TaskChunkType.COMPLETE, params=params, within=30
    )
    return str(events(chunks, TurnAnswered)[0].answer)


async def last_sequence(http: httpx.AsyncClient, key: str) -> int:
    chunks = await collect_events(http, key, lambda c: c.chunk_type == TaskChunkType.COMPLETE)
    return chunks[-1].sequence_id


async def test_a_3_mb_message_is_413_and_never_reaches_temporal(
    http: httpx.AsyncClient, client: Client
) -> None:
    key = new_key()
    response = await http.post(f"/sessions/{key}/messages", json={"content": "x" * (3 * MB)})
    assert response.status_code == 413
    detail = response.json()["detail"]
    assert "the limit is 1,048,576 bytes" in detail and "SYNAPSE_MAX_REQUEST_BYTES" in detail
    assert detail.endswith("Store large text with POST /artifacts and send its artifact id instead")
    assert (await http.get(f"/sessions/{key}")).status_code == 404  # nothing was started or signalled


async def test_a_message_over_its_own_limit_is_413_and_the_session_goes_on(http: httpx.AsyncClient) -> None:
    key = new_key()
    assert "Alice" in await answered(http, key, "SELECT customer FROM orders WHERE id = 1")
    before = await last_sequence(http, key)
    for size in (100 * 1024, int(1.5 * MB)):  # over the message limit; over the request limit
        response = await http.post(f"/sessions/{key}/messages", json={"content": "y" * size})
        assert response.status_code == 413, response.text
        assert "the limit is" in response.json()["detail"]
    over = await http.post(f"/sessions/{key}/messages", json={"content": "é" * 40_000})  # 80,000 bytes
    assert over.status_code == 413
    assert over.json()["detail"].startswith("content is 80,000 bytes; the limit is 65,536 bytes")
    assert "POST /artifacts" in over.json()["detail"]
    assert "Bob" in await answered(http, key, "SELECT customer FROM orders WHERE id = 2", after=before)
    status = await http.get(f"/sessions/{key}")
    assert status.status_code == 200
    page = (await http.get(f"/sessions/{key}/messages")).json()
    asked = [m["content"] for m in page["messages"] if m["role"] == "user"]
    assert asked == ["SELECT customer FROM orders WHERE id = 1", "SELECT customer FROM orders WHERE id = 2"]


async def test_comments_and_reasons_have_a_limit_too(http: httpx.AsyncClient) -> None:
    key = new_key()
    await answered(http, key, "SELECT 1")
    decided = await http.post(
        f"/sessions/{key}/interactions/tool_9", json={"approved": False, "user_message": "n" * 5000}
    )
    assert decided.status_code == 413
    assert (
        "user_message is 5,000 bytes; the limit is 4,096 bytes (SYNAPSE_MAX_COMMENT_BYTES)"
        in decided.json()["detail"]
    )
    paused = await http.post(f"/sessions/{key}/pause", json={"reason": "r" * 5000})
    assert paused.status_code == 413
    assert (await http.get(f"/sessions/{key}")).json()["status"] == "active"


async def test_a_chunked_body_over_the_limit_is_cut_off_with_413(http: httpx.AsyncClient) -> None:
    async def body() -> AsyncIterator[bytes]:
        yield b'{"content": "'
        for _ in range(40):
            yield b"z" * 65536
        yield b'"}'

    response = await http.post(
        f"/sessions/{new_key()}/messages", content=body(), headers={"content-type": "application/json"}
    )
    assert response.status_code == 413
    assert "SYNAPSE_MAX_REQUEST_BYTES" in response.json()["detail"]


@pytest.fixture
async def roomy(client: Client, settings: Settings, worker: None) -> AsyncIterator[httpx.AsyncClient]:
    """The API with limits raised far past what history can hold inline: the claim check carries it."""
    limits = LimitSettings(max_request_bytes=4 * MB, max_message_bytes=3 * MB)
    roomy_settings = settings.model_copy(update={"limits": limits})
    async with serve(create_app(roomy_settings, client=client)) as http_client:
        yield http_client


async def test_with_raised_limits_a_1_5_mb_message_is_accepted_and_nothing_wedges(
    roomy: httpx.AsyncClient,
) -> None:
    key = new_key()
    text = "SELECT customer FROM orders WHERE id = 3 -- " + "w" * int(1.5 * MB)
    assert "Carol" in await answered(roomy, key, text)
    before = await last_sequence(roomy, key)
    assert "Dave" in await answered(roomy, key, "SELECT customer FROM orders WHERE id = 4", after=before)
    status = await roomy.get(f"/sessions/{key}")
    assert status.status_code == 200
    assert all(len(str(m["content"])) < MB for m in status.json()["messages"]), "the giant was archived"
    page = (await roomy.get(f"/sessions/{key}/messages", params={"limit": 8})).json()
    assert page["messages"][0]["content"] == text, "and is still there, whole, in the conversation"
