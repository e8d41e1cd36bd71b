"""Test helpers: a real uvicorn server for the app, an SSE reader, free ports."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import httpx
import uvicorn
from fastapi import FastAPI

from contracts import TaskStreamChunk


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@asynccontextmanager
async def running(app: Any) -> AsyncIterator[str]:
    """Run an ASGI app on a real uvicorn server on a free loopback port; yield its base URL."""
    port = free_port()
    config = uvicorn.Config(
        app, host="127.0.0.1", port=port, log_level="warning", timeout_graceful_shutdown=1
    )
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    async with asyncio.timeout(15):
        while not server.started:
            if task.done():
                task.result()
            await asyncio.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await task


@asynccontextmanager
async def serve(app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    """Run `app` on a real uvicorn server on loopback; yield an HTTP client for it."""
    async with running(app) as base_url, httpx.AsyncClient(base_url=base_url, timeout=30) as http:
        yield http


async def collect_events(
    http: httpx.AsyncClient,
    key: str,
    stop: Callable[[TaskStreamChunk], bool],
    *,
    params: dict[str, Any] | None = None,
    headers: dict[str, str] | None = None,
    within: float = 20.0,
) -> list[TaskStreamChunk]:
    """Read the session's SSE stream until `stop(chunk)` holds; fail after `within` seconds."""
    chunks: list[TaskStreamChunk] = []
    ids: list[str] = []
    async with asyncio.timeout(within):
        async with http.stream("GET", f"/sessions/{key}/events", params=params, headers=headers) as response:
            assert response.status_code == 200, await response.aread()
            assert response.headers["content-type"].startswith("text/event-stream")
            async for line in response.aiter_lines():
                if line.startswith("id: "):
                    ids.append(line[4:])
                elif line.startswith("data: "):
                    chunk = TaskStreamChunk.model_validate_json(line[6:])
                    assert ids and ids[-1] == str(chunk.sequence_id), "SSE id must be the sequence_id"
                    chunks.append(chunk)
                    if stop(chunk):
                        return chunks
    raise AssertionError(f"the stream ended before the awaited chunk; got {[c.chunk_type for c in chunks]}")


def fields(chunk: TaskStreamChunk) -> dict[str, Any]:
    """A chunk's content as a dict (fails the test when it is text)."""
    assert isinstance(chunk.content, dict), (
        f"expected a dict in {chunk.chunk_type} chunk, got {chunk.content!r}"
    )
    return chunk.content
