"""People watching a session over SSE when the Temporal server restarts lose nothing.

A dev server of this test alone (persisting to SQLite) is stopped and started again while three
clients follow a session waiting for approval; the API and the worker keep their Temporal
client across it. Every client's stream either carries on, or ends with an `error` event naming
the last id it got, and a reconnect with that `Last-Event-ID` (as a browser does) continues it.
After the approval every client has the whole stream, in order, without gaps.
"""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

import httpx

from api.main import create_app
from contracts import TaskChunkType, TaskStreamChunk
from core.settings import Settings
from worker import build_worker

from ..support import Watcher, serve
from .conftest import DemoDb
from .flows import wait_pending
from .processes import Children, DevServer

TEST_BOUND = 150.0
DELETE_CANCELLED = "DELETE FROM orders WHERE status = 'cancelled'"


class Follower:
    """A client that reconnects with Last-Event-ID whenever its stream ends early, like EventSource."""

    def __init__(self, http: httpx.AsyncClient, key: str) -> None:
        self.http = http
        self.key = key
        self.chunks: list[TaskStreamChunk] = []
        self.reconnects = 0
        self.watcher = Watcher(http, key)

    async def until(self, kind: TaskChunkType) -> None:
        while True:
            try:
                await self.watcher.wait_for(
                    lambda chunks: any(c.chunk_type == kind for c in [*self.chunks, *chunks])
                )
                return
            except AssertionError:
                if not self.watcher.ended:
                    raise
                last = self.watcher.events[-1]
                assert last.event == "error", f"a stream may only end early with `error`, got {last}"
                self.chunks += self.watcher.chunks
                assert last.control["last_event_id"] == self.chunks[-1].sequence_id
                self.reconnects += 1
                headers = {"Last-Event-ID": str(last.control["last_event_id"])}
                self.watcher = Watcher(self.http, self.key, headers=headers)

    @property
    def everything(self) -> list[TaskStreamChunk]:
        return [*self.chunks, *self.watcher.chunks]


async def test_watchers_lose_nothing_when_the_server_restarts(
    children: Children, settings: Settings, tmp_path: Path, demo_db: DemoDb
) -> None:
    server = DevServer(children, tmp_path / "temporal.db")
    key = f"watched-{uuid.uuid4().hex[:8]}"
    async with asyncio.timeout(TEST_BOUND):
        client = await server.start()
        async with build_worker(client, settings), serve(create_app(settings, client=client)) as http:
            sent = await http.post(f"/sessions/{key}/messages", json={"content": DELETE_CANCELLED})
            assert sent.status_code == 202
            interaction_id = await wait_pending(http, key)
            followers = [Follower(http, key) for _ in range(3)]
            for follower in followers:
                await follower.until(TaskChunkType.TOOL_APPROVAL_REQUEST)

            await server.stop()
            await server.start()  # same port and file; the API's and worker's client reconnect

            decided = await http.post(
                f"/sessions/{key}/interactions/{interaction_id}", json={"approved": True, "principal": "bob"}
            )
            assert decided.status_code == 200, decided.text
            for follower in followers:
                await follower.until(TaskChunkType.COMPLETE)
            reference = followers[0].everything
            for follower in followers:
                chunks = follower.everything
                assert [c.sequence_id for c in chunks] == list(range(len(chunks))), "in order, nothing missed"
                assert chunks == reference
                await follower.watcher.close()
    assert demo_db.count("status = 'cancelled'") == 0
