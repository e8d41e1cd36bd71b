"""Following a session's events over SSE, resumed like a browser's `EventSource`.

A stream the server ends early (a `reconnect` or `error` event) or a dropped connection is resumed
after the last id seen (`Last-Event-ID`), so a caller sees every chunk once, in order.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from typing import Any

import httpx

from contracts import TaskChunkType, TaskStreamChunk

from .errors import SynapseError
from .sse import sse_events

RECONNECT_DELAY = 1.0
"""Seconds before resuming a stream the server ended early (what its `retry:` line asks)."""
RECONNECTS = 20
"""Resumptions in a row without a new chunk before `follow_events()` gives up."""


def ends_turn(chunk: TaskStreamChunk) -> bool:
    """Whether the chunk is a turn's last: its final chunk, or `cancelled`."""
    return chunk.is_final or chunk.chunk_type == TaskChunkType.CANCELLED


async def follow_events(
    http: httpx.AsyncClient, key: str, *, after: int | None = None, opened: asyncio.Event | None = None
) -> AsyncGenerator[TaskStreamChunk]:
    """Every chunk of the session after `after`, in order, until its stream ends.

    Resumes with `Last-Event-ID` after a `reconnect` or `error` event or a dropped
    connection (up to `RECONNECTS` times in a row without progress). `opened` is set once
    the server answered the (first) request, i.e. the client is following.

    Raises:
        SynapseError: The API refused the stream (e.g. 404 for an unknown session), or it
            could not be resumed.
    """
    last = after
    stalled = 0
    while True:
        headers = {"Last-Event-ID": str(last)} if last is not None else {}
        ended_early: str | None = None
        try:
            async with http.stream("GET", f"/sessions/{key}/events", headers=headers, timeout=None) as reply:
                if reply.is_error:
                    await reply.aread()
                    raise SynapseError.of(reply)
                if opened is not None:
                    opened.set()
                async for event in sse_events(reply):
                    if event.id is not None:
                        chunk = event.chunk
                        if last is None or chunk.sequence_id > last:
                            last = chunk.sequence_id
                            stalled = 0
                            yield chunk
                    elif event.event in ("reconnect", "error"):
                        ended_early = event.control.get("detail", event.event)
        except httpx.TransportError as err:
            ended_early = f"the connection dropped: {err}"
        if ended_early is None:
            return
        stalled += 1
        if stalled > RECONNECTS:
            raise SynapseError(503, f"the event stream of {key!r} could not be resumed: {ended_early}")
        await asyncio.sleep(RECONNECT_DELAY)


async def follow_turn(
    http: httpx.AsyncClient, key: str, message: dict[str, Any]
) -> AsyncGenerator[TaskStreamChunk]:
    """Send `message` to the session and follow its turn (ASYNC_STREAM): every chunk from its start
    to its end (`complete` or `cancelled`). A dropped connection is resumed on the session's stream
    after the last chunk seen.

    Raises:
        SynapseError: The API refused the message (4xx: a cancelled session, a bad body), or
            the stream could not be resumed.
    """
    last: int | None = None
    try:
        async with http.stream(
            "POST",
            f"/sessions/{key}/messages",
            json=message,
            headers={"Accept": "text/event-stream"},
            timeout=httpx.Timeout(http.timeout.connect, read=None),
        ) as reply:
            if reply.is_error:
                await reply.aread()
                raise SynapseError.of(reply)
            async for event in sse_events(reply):
                if event.id is not None:
                    chunk = event.chunk
                    last = chunk.sequence_id
                    yield chunk
                    if ends_turn(chunk):
                        return
    except httpx.TransportError:
        if last is None:
            raise
    if last is None:
        raise SynapseError(503, f"the event stream of {key!r} ended before its turn began")
    async for chunk in follow_events(http, key, after=last):  # the rest of the turn, resumed
        yield chunk
        if ends_turn(chunk):
            return
