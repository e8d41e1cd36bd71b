"""Many people watching one session over SSE never block a decision, and each sees everything.

Real app on uvicorn, real worker, real dev server; the clients are real HTTP connections.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

import httpx
import pytest
from fastapi import FastAPI
from temporalio.client import Client

from api.main import create_app
from api.sse import StreamHub
from contracts import DecisionTaken, TaskChunkType, TaskStreamChunk
from core.client.sse import SseEvent, parse_sse
from core.settings import Settings
from core.tls import tls_context
from workflows.identity.ids import session_workflow_id

from ..conftest import assert_eventually
from ..support import Watcher, chunk_of, event_of, running

DELETE_CANCELLED = "DELETE FROM orders WHERE status = 'cancelled'"
AFTER_APPROVAL = [
    TaskChunkType.PROGRESS,  # the decision
    TaskChunkType.TOOL_CALL_REQUEST,
    TaskChunkType.TOOL_USE,
    TaskChunkType.RESPONSE,
    TaskChunkType.COMPLETE,
]


@dataclass
class Served:
    """The app on a real server, an HTTP client without a connection cap, and the app's hub."""

    app: FastAPI
    http: httpx.AsyncClient
    base_url: str

    @property
    def hub(self) -> StreamHub:
        hub: StreamHub = self.app.state.hub
        return hub


@contextlib.asynccontextmanager
async def serving(client: Client, settings: Settings) -> AsyncIterator[Served]:
    app = create_app(settings, client=client)
    limits = httpx.Limits(max_connections=None, max_keepalive_connections=None)
    async with (
        running(app) as base_url,
        httpx.AsyncClient(base_url=base_url, timeout=30, limits=limits, verify=tls_context()) as http,
    ):
        yield Served(app, http, base_url)


@pytest.fixture
async def served(client: Client, settings: Settings, worker: None) -> AsyncIterator[Served]:
    async with serving(client, settings) as served:
        yield served


def new_key() -> str:
    return f"w-{uuid.uuid4().hex[:10]}"


def ids(chunks: list[TaskStreamChunk]) -> list[int]:
    return [c.sequence_id for c in chunks]


def has(kind: TaskChunkType) -> Callable[[list[TaskStreamChunk]], bool]:
    return lambda chunks: any(c.chunk_type == kind for c in chunks)


def completes(chunks: list[TaskStreamChunk]) -> int:
    return sum(c.chunk_type == TaskChunkType.COMPLETE for c in chunks)


def turns_complete(n: int) -> Callable[[list[TaskStreamChunk]], bool]:
    return lambda chunks: completes(chunks) == n


def turn_complete_after_approval(chunks: list[TaskStreamChunk]) -> bool:
    return any(c.chunk_type == TaskChunkType.TOOL_USE for c in chunks) and chunks[-1].chunk_type == (
        TaskChunkType.COMPLETE
    )


async def pending_interaction(http: httpx.AsyncClient, key: str) -> str:
    session = await assert_eventually(
        lambda: http.get(f"/sessions/{key}"),
        lambda r: r.status_code == 200 and bool(r.json()["pending_interactions"]),
        what=f"a pending approval in {key}",
    )
    interaction_id: str = session.json()["pending_interactions"][0]["interaction_id"]
    return interaction_id


async def attached(served: Served, key: str, n: int, what: str) -> None:
    """Wait until exactly `n` SSE clients of the app follow the session."""

    async def clients() -> int:
        return served.hub.clients(session_workflow_id(key))

    await assert_eventually(clients, lambda found: found == n, what=what)


async def watchers(served: Served, key: str, n: int) -> list[Watcher]:
    """`n` clients following the session, all attached to this process's hub."""
    opened = [Watcher(served.http, key) for _ in range(n)]
    await attached(served, key, n, f"{n} SSE clients attached")
    return opened


async def test_a_hundred_watchers_do_not_block_the_decision_and_all_see_it(
    served: Served, client: Client, count_orders: Callable[[str], int]
) -> None:
    key = new_key()
    sent = await served.http.post(f"/sessions/{key}/messages", json={"content": DELETE_CANCELLED})
    assert sent.status_code == 202, sent.text
    interaction_id = await pending_interaction(served.http, key)
    crowd = await watchers(served, key, 100)
    assert served.hub.feeds() == 1, "one subscription per session per API process"
    for watcher in crowd:
        await watcher.wait_for(has(TaskChunkType.TOOL_APPROVAL_REQUEST))

    decided = await served.http.post(
        f"/sessions/{key}/interactions/{interaction_id}", json={"approved": True, "principal": "bob"}
    )

    assert decided.status_code == 200, decided.text
    assert decided.json()["tool_result"]["content"]["rowcount"] == 3
    assert count_orders("status = 'cancelled'") == 0
    for watcher in crowd:
        await watcher.wait_for(turn_complete_after_approval)
    reference = crowd[0].chunks
    assert ids(reference) == list(range(len(reference))), "in order, without gaps"
    approval_at = next(
        i for i, c in enumerate(reference) if c.chunk_type == TaskChunkType.TOOL_APPROVAL_REQUEST
    )
    after = [c.chunk_type for c in reference[approval_at + 1 :] if c.chunk_type != TaskChunkType.THINKING]
    assert after == AFTER_APPROVAL
    assert event_of(reference[approval_at + 1], DecisionTaken).approved is True
    for watcher in crowd:
        assert watcher.chunks == reference, "every client sees the same chunks"
        assert watcher.status == 200 and not watcher.ended, "no client is cut off"
    audit = (await served.http.get(f"/sessions/{key}/audit")).json()["entries"]
    assert [e["kind"] for e in audit if e["interaction_id"] == interaction_id] == ["requested", "approved"]
    for watcher in crowd:
        await watcher.close()


async def test_a_slow_client_is_dropped_with_a_reconnect_event_and_resumes_without_loss(
    client: Client, settings: Settings, worker: None
) -> None:
    settings = settings.model_copy(update={"api": settings.api.model_copy(update={"sse_client_buffer": 16})})
    app = create_app(settings, client=client)
    async with (
        running(app, send_buffer=8192) as base_url,
        httpx.AsyncClient(base_url=base_url, timeout=30, verify=tls_context()) as http,
    ):
        served = Served(app, http, base_url)
        key = new_key()
        assert (await http.post(f"/sessions/{key}/messages", json={"content": "hello"})).status_code == 202
        fast = (await watchers(served, key, 1))[0]
        await fast.wait_for(has(TaskChunkType.COMPLETE))
        slow = await SlowClient.open(base_url, key)
        await attached(served, key, 2, "the slow client attached")

        big = "x" * 20_000
        for n in range(16):
            sent = await http.post(f"/sessions/{key}/messages", json={"content": f"{n} {big}"})
            assert sent.status_code == 202
        await fast.wait_for(lambda chunks: completes(chunks) == 17)
        # The turns may all have come in one burst, which never drops a client: the next one does.
        assert (await http.post(f"/sessions/{key}/messages", json={"content": big})).status_code == 202
        await fast.wait_for(lambda chunks: completes(chunks) == 18)
        await attached(served, key, 1, "the slow client dropped while the fast one kept up")

        got = await slow.read_all()
        chunks = [chunk_of(event) for event in got if event.id is not None]
        assert ids(chunks) == list(range(len(chunks))), "what it got is in order, without gaps"
        last = got[-1]
        assert last.event == "reconnect", f"the slow client's stream must end with `reconnect`, got {last}"
        assert last.control["last_event_id"] == chunks[-1].sequence_id
        assert "Last-Event-ID" in last.control["detail"]

        again = Watcher(http, key, headers={"Last-Event-ID": str(last.control["last_event_id"])})
        rest = len(fast.chunks) - len(chunks)
        await again.wait_for(lambda c: len(c) >= rest)
        assert chunks + again.chunks[:rest] == fast.chunks, "reconnected with Last-Event-ID, nothing missed"
        for watcher in (fast, again):
            await watcher.close()


class SlowClient:
    """An SSE client that reads nothing: a tiny receive buffer, no reads until told."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock

    @classmethod
    async def open(cls, base_url: str, key: str) -> SlowClient:
        host, port = base_url.removeprefix("http://").split(":")
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.setblocking(False)
        await asyncio.get_running_loop().sock_connect(sock, (host, int(port)))
        request = f"GET /sessions/{key}/events HTTP/1.1\r\nHost: {host}\r\nAccept: text/event-stream\r\n\r\n"
        await asyncio.get_running_loop().sock_sendall(sock, request.encode())
        return cls(sock)

    async def read_all(self, within: float = 30.0) -> list[SseEvent]:
        """Read until the server ends the response; the events, in order."""
        loop = asyncio.get_running_loop()
        data = b""
        async with asyncio.timeout(within):
            while not data.endswith(b"0\r\n\r\n"):  # the chunked body's end
                piece = await loop.sock_recv(self.sock, 65536)
                if not piece:
                    break
                data += piece
        self.sock.close()
        head, _, body = data.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 200"), head
        return await parse_chunked_sse(body)


async def parse_chunked_sse(body: bytes) -> list[SseEvent]:
    """SSE events of an HTTP/1.1 chunked body."""
    text = b""
    while body:
        size_line, _, rest = body.partition(b"\r\n")
        size = int(size_line, 16)
        if size == 0:
            break
        text += rest[:size]
        body = rest[size + 2 :]

    async def lines() -> AsyncIterator[str]:
        for line in text.decode().split("\n"):
            yield line

    return [event async for event in parse_sse(lines())]


async def test_reconnecting_with_last_event_id_or_after_misses_nothing(served: Served) -> None:
    key = new_key()
    assert (await served.http.post(f"/sessions/{key}/messages", json={"content": "one"})).status_code == 202
    first = (await watchers(served, key, 1))[0]
    await first.wait_for(has(TaskChunkType.COMPLETE))
    seen = first.chunks
    await first.close()

    for n in ("two", "three"):
        assert (await served.http.post(f"/sessions/{key}/messages", json={"content": n})).status_code == 202
    by_header = Watcher(served.http, key, headers={"Last-Event-ID": str(seen[-1].sequence_id)})
    by_query = Watcher(served.http, key, params={"after": str(seen[-1].sequence_id)})
    everything = Watcher(served.http, key)
    await by_header.wait_for(turns_complete(2))
    await by_query.wait_for(turns_complete(2))
    await everything.wait_for(turns_complete(3))
    assert seen + by_header.chunks == everything.chunks
    assert by_query.chunks == by_header.chunks
    for watcher in (by_header, by_query, everything):
        await watcher.close()


IDLE_EVENTS_PER_MINUTE = 0
"""The figure the README states: an idle watched session adds no history, however many watch."""
KEEPALIVE_SECONDS = 0.5
"""`SYNAPSE_SSE_KEEPALIVE_SECONDS` for the idle test (15 s by default)."""
IDLE_SECONDS = 12.0
"""The measured idle spell: each client gets as many keep-alives in it as in six idle minutes."""


@pytest.mark.slow(seconds=25)
async def test_fifty_idle_watchers_add_no_history(client: Client, settings: Settings, worker: None) -> None:
    """Watching adds history only when the session publishes: the feed's one watch is a long-poll
    that waits on a condition (answered only by a new chunk or the run's end, its result re-polled
    by reads), and nothing else of the API's touches the workflow but the keep-alive each idle
    client is sent. That comes every `SYNAPSE_SSE_KEEPALIVE_SECONDS`, so with it lowered the
    spell holds what a default idle minute holds many times over: the history does not grow by
    one event, and no client is dropped. (The README's figure is measured over a whole minute by
    `bench`, `stream.idle_cost`.)"""
    api = settings.api.model_copy(update={"sse_keepalive_seconds": KEEPALIVE_SECONDS})
    async with serving(client, settings.model_copy(update={"api": api})) as served:
        key = new_key()
        sent = await served.http.post(f"/sessions/{key}/messages", json={"content": "hello"})
        assert sent.status_code == 202
        crowd = await watchers(served, key, 50)
        for watcher in crowd:
            await watcher.wait_for(has(TaskChunkType.COMPLETE))
        handle = client.get_workflow_handle(session_workflow_id(key))
        before = (await handle.describe()).raw_info.history_length
        kept_alive = [w.keepalives for w in crowd]

        await asyncio.sleep(IDLE_SECONDS)  # the session idles while 50 people watch

        after = (await handle.describe()).raw_info.history_length
        assert after - before <= IDLE_EVENTS_PER_MINUTE, f"history grew from {before} to {after} while idle"
        assert all(not w.ended for w in crowd) and served.hub.clients(session_workflow_id(key)) == 50
        meanwhile = [w.keepalives - n for w, n in zip(crowd, kept_alive, strict=True)]
        assert min(meanwhile) >= IDLE_SECONDS / KEEPALIVE_SECONDS / 2, f"each client kept alive: {meanwhile}"
        for watcher in crowd:
            await watcher.close()
