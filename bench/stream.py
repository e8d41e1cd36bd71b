"""Stream latency: a chunk published in the workflow → received by a subscriber already listening.

Synapse: an SSE connection open on `GET /sessions/{key}/events`; timed from sending a message
(`POST /sessions/{key}/messages`) until the `processing` chunk the workflow publishes when it
takes the message arrives on the SSE connection. Bare, alternating: a `WorkflowStream` workflow
that publishes one item per signal, a `WorkflowStreamClient.subscribe` subscriber running with the
API's poll cooldown; timed from sending the signal until the item arrives. Before each sample both
subscribers sit idle (a long-poll waiting in the workflow), as a user's open stream does.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from typing import Any

from temporalio.client import WorkflowHandle
from temporalio.contrib.workflow_streams import WorkflowStreamClient

from api.sse import POLL_COOLDOWN

from . import synapse
from .bare import STREAM_TOPIC, BareStream
from .harness import Harness, Stack
from .stats import Result, Row, alternate

SETTLE = POLL_COOLDOWN.total_seconds() + 0.1
"""Idle time before a sample, so the subscriber's next long-poll is waiting in the workflow."""
ROTATE_EVERY = 100
"""Rounds after which a new session / stream workflow (and subscriber) is used."""
CHUNK_WITHIN = 30.0

Arrivals = asyncio.Queue[tuple[float, str]]


@contextlib.asynccontextmanager
async def _sse(stack: Stack) -> AsyncIterator[tuple[str, Arrivals]]:
    """A fresh session and an open SSE connection to it; arrivals are (time, chunk type)."""
    key = stack.key("stream")
    created = await stack.http.post("/sessions", json={"session_key": key})
    if created.status_code != 201:
        raise RuntimeError(f"POST /sessions answered {created.status_code}: {created.text}")
    arrivals: Arrivals = asyncio.Queue()
    opened = asyncio.Event()

    async def read() -> None:
        async with stack.http.stream("GET", f"/sessions/{key}/events", timeout=None) as response:
            if response.status_code != 200:
                raise RuntimeError(f"GET /sessions/{key}/events answered {response.status_code}")
            kind = ""
            async for line in response.aiter_lines():
                if line.startswith("retry:"):
                    opened.set()
                elif line.startswith("event: "):
                    kind = line[7:]
                elif line.startswith("data: "):
                    arrivals.put_nowait((time.perf_counter(), kind))

    async with _running(read()) as reader:
        await _first(opened.wait(), reader)
        yield key, arrivals


@contextlib.asynccontextmanager
async def _subscriber(stack: Stack) -> AsyncIterator[tuple[WorkflowHandle[Any, Any], Arrivals]]:
    """A fresh bare stream workflow and a subscriber to it (the API's poll cooldown)."""
    handle = await stack.client.start_workflow(
        BareStream.run, id=stack.key("bare-stream"), task_queue=stack.bare_queue
    )
    arrivals: Arrivals = asyncio.Queue()

    async def read() -> None:
        subscription = WorkflowStreamClient.create(stack.client, handle.id).subscribe(
            [STREAM_TOPIC], result_type=str, poll_cooldown=POLL_COOLDOWN
        )
        async for item in subscription:
            arrivals.put_nowait((time.perf_counter(), item.data))

    async with _running(read()):
        yield handle, arrivals


@contextlib.asynccontextmanager
async def _running(coroutine: Any) -> AsyncIterator[asyncio.Task[None]]:
    task: asyncio.Task[None] = asyncio.create_task(coroutine)
    try:
        yield task
    finally:
        task.cancel()
        with contextlib.suppress(BaseException):
            await task


async def _first(awaitable: Any, reader: asyncio.Task[None]) -> Any:
    """Await `awaitable`, failing early if the reader died, and within CHUNK_WITHIN seconds."""
    waiter = asyncio.ensure_future(awaitable)
    async with asyncio.timeout(CHUNK_WITHIN):
        await asyncio.wait({waiter, reader}, return_when=asyncio.FIRST_COMPLETED)
    if not waiter.done():
        waiter.cancel()
        reader.result()
        raise RuntimeError("the subscriber ended before the awaited item")
    return waiter.result()


async def _until(arrivals: Arrivals, kind: str) -> float:
    async with asyncio.timeout(CHUNK_WITHIN):
        while True:
            at, got = await arrivals.get()
            if got == kind:
                return at


async def run(harness: Harness, *, samples: int, warmup: int) -> Result:
    """Measure and return the stream row."""
    async with harness.stack("stream") as stack, contextlib.AsyncExitStack() as open_streams:
        sessions: list[tuple[str, Arrivals]] = []
        streams: list[tuple[WorkflowHandle[Any, Any], Arrivals]] = []

        async def synapse_chunk(i: int) -> float:
            if i % ROTATE_EVERY == 0:
                sessions.append(await open_streams.enter_async_context(_sse(stack)))
            key, arrivals = sessions[-1]
            await asyncio.sleep(SETTLE)
            started = time.perf_counter()
            await synapse.send(stack, key, f"hello {i}")
            arrived = await _until(arrivals, "processing")
            await _until(arrivals, "complete")  # the turn ends before the next sample
            return arrived - started

        async def bare_item(i: int) -> float:
            if i % ROTATE_EVERY == 0:
                streams.append(await open_streams.enter_async_context(_subscriber(stack)))
            handle, arrivals = streams[-1]
            await asyncio.sleep(SETTLE)
            started = time.perf_counter()
            await handle.signal(BareStream.ping, f"item {i}")
            arrived = await _until(arrivals, f"item {i}")
            return arrived - started

        m = await alternate(
            "stream", {"synapse": synapse_chunk, "bare": bare_item}, samples=samples, warmup=warmup
        )
    cooldown = int(POLL_COOLDOWN.total_seconds() * 1000)
    return Result(
        rows=[
            Row(
                "stream: publish → subscriber",
                "ms",
                m["synapse"],
                m["bare"],
                "how soon an open event stream (SSE) shows the message was taken; bare: signal → item at a "
                f"WorkflowStreamClient subscriber (both poll_cooldown {cooldown} ms)",
            )
        ]
    )
