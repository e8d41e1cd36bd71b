"""An idle event stream stays open: `GET /sessions/{key}/events` sends `:` comment lines while
nothing happens (so proxies keep it, and dead clients are noticed), and the next chunks still come
through the same connection."""

from __future__ import annotations

import asyncio
import time

import httpx
from temporalio.client import Client

from api.main import create_app
from contracts import TaskChunkType, TurnAnswered
from core.client.sse import parse_sse
from core.settings import ApiSettings, Settings

from ..support import chunk_of, collect_events, event_of, serve
from .test_sessions import new_key

KEEPALIVE_SECONDS = 2.0
"""`SYNAPSE_SSE_KEEPALIVE_SECONDS` for this test (15 s by default)."""


async def test_an_idle_stream_gets_keepalive_comments_and_then_the_next_turn(
    client: Client, settings: Settings, worker: None
) -> None:
    quick = settings.model_copy(update={"api": ApiSettings(sse_keepalive_seconds=KEEPALIVE_SECONDS)})
    async with serve(create_app(quick, client=client)) as http:
        await _idle_then_a_turn(http)


async def _idle_then_a_turn(http: httpx.AsyncClient) -> None:
    key = new_key()
    assert (await http.post(f"/sessions/{key}/messages", json={"content": "hello"})).status_code == 202
    first_turn = await collect_events(http, key, lambda c: c.is_final, within=60)
    last = first_turn[-1].sequence_id

    async with asyncio.timeout(KEEPALIVE_SECONDS * 4 + 60):
        url = f"/sessions/{key}/events"
        params = {"after": last}
        async with http.stream("GET", url, params=params, timeout=KEEPALIVE_SECONDS * 4) as response:
            assert response.status_code == 200
            opened = time.monotonic()
            lines = response.aiter_lines()
            before: list[str] = []
            comment = None
            async for line in lines:
                if line.startswith(":"):
                    comment = line
                    break
                before.append(line)
            idle = time.monotonic() - opened
            assert comment == ": keepalive", f"the stream ended without one: {before}"
            assert before == ["retry: 1000", ""], "nothing but the retry hint while the session is idle"
            assert idle >= KEEPALIVE_SECONDS - 1, f"a keep-alive after {idle:.1f} s of silence, not sooner"

            sent = await http.post(
                f"/sessions/{key}/messages", json={"content": "SELECT customer FROM orders WHERE id = 1"}
            )
            assert sent.status_code == 202
            chunks = []
            async for event in parse_sse(lines):
                chunks.append(chunk_of(event))
                if chunks[-1].is_final:
                    break
    assert [c.sequence_id for c in chunks] == list(range(last + 1, last + 1 + len(chunks))), (
        "the stream resumes where it was, nothing lost"
    )
    answer = next(c for c in chunks if c.chunk_type == TaskChunkType.RESPONSE)
    assert event_of(answer, TurnAnswered).answer == "SELECT returned 1 row:\ncustomer\nAlice"
