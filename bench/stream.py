"""Stream latency and idle cost: a chunk published in the workflow → received by subscribers.

Synapse: SSE connections open on `GET /sessions/{key}/events` (1, then 100 on one session, all
sharing the API process's one subscription; the 100 read in a process of their own,
`bench.watchers`, as people at their own machines do); timed from sending a message (`POST
/sessions/{key}/messages`) until the `processing` chunk the workflow publishes when it takes
the message arrives on the connection (with 100: on the last of them). Bare, alternating: a
`WorkflowStream` workflow that publishes one item per signal and one `WorkflowStreamClient`
subscriber (poll cooldown 100 ms, as the API's feed); timed from sending the signal until the
item arrives (a bare subscriber per watcher could not serve 100: Temporal allows 10 updates in
flight per workflow). Before each sample both sides sit idle (a long-poll waiting in the
workflow), as a user's open stream does.

Idle cost: the history events a session gains while 50 SSE clients watch it and nothing
happens, over a window (60 s; 10 s with --quick), per minute.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import time
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path
from typing import Any

from temporalio.client import WorkflowHandle
from temporalio.contrib.workflow_streams import WorkflowStreamClient

from api.sse.feed import WATCH_COOLDOWN_SECONDS

from . import synapse
from .bare import STREAM_TOPIC, BareStream
from .harness import Harness, Stack
from .stats import Measure, Result, Row, alternate, one, progress

POLL_COOLDOWN = timedelta(seconds=WATCH_COOLDOWN_SECONDS)
"""The bare subscriber's cooldown: the same pause the API's feed takes between long-polls."""
SETTLE = POLL_COOLDOWN.total_seconds() + 0.1
"""Idle time before a sample, so the subscriber's next long-poll is waiting in the workflow."""
ROTATE_EVERY = 100
"""Rounds after which a new session / stream workflow (and subscribers) is used."""
CHUNK_WITHIN = 30.0
CROWD = 100
"""Watchers of the crowded session."""
IDLE_WATCHERS = 50

Arrivals = asyncio.Queue[tuple[float, str]]


@contextlib.asynccontextmanager
async def _sse(stack: Stack, watchers: int) -> AsyncIterator[tuple[str, list[Arrivals]]]:
    """A fresh session with `watchers` open SSE connections; arrivals are (time, chunk type) each
    (a crowd's: one queue, of when the last of them got each chunk)."""
    key = stack.key("stream")
    await stack.synapse.create_session(key)
    if watchers > 1:
        async with _elsewhere(stack, key, watchers) as last_of_them:
            yield key, [last_of_them]
        return
    queues: list[Arrivals] = [asyncio.Queue() for _ in range(watchers)]
    opened = [asyncio.Event() for _ in range(watchers)]

    async def read(arrivals: Arrivals, ready: asyncio.Event) -> None:
        async for chunk in stack.synapse.events(key, opened=ready):
            arrivals.put_nowait((time.perf_counter(), chunk.chunk_type.value))

    async with contextlib.AsyncExitStack() as readers:
        tasks = [
            await readers.enter_async_context(_running(read(q, e)))
            for q, e in zip(queues, opened, strict=True)
        ]
        for ready, task in zip(opened, tasks, strict=True):
            await _first(ready.wait(), task)
        yield key, queues


@contextlib.asynccontextmanager
async def _elsewhere(stack: Stack, key: str, watchers: int) -> AsyncIterator[Arrivals]:
    """`watchers` SSE clients of the session in a process of their own (`bench.watchers`), as
    people at their own machines; arrivals: (when the last of them got it, chunk type)."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bench.watchers",
        str(stack.synapse.http.base_url),
        key,
        str(watchers),
        cwd=Path(__file__).parents[1],
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    assert process.stdout is not None and process.stderr is not None
    arrivals: Arrivals = asyncio.Queue()
    try:
        async with asyncio.timeout(CHUNK_WITHIN):
            first = await process.stdout.readline()
        if first.strip() != b"ready":
            problem = (await process.stderr.read()).decode(errors="replace")
            raise RuntimeError(f"the {watchers} watchers did not start: {first!r} {problem[-2000:]}")

        async def read() -> None:
            assert process.stdout is not None
            async for line in process.stdout:
                kind, _, at = line.decode().split()
                arrivals.put_nowait((float(at), kind))

        async with _running(read()):
            yield arrivals
    finally:
        if process.returncode is None:
            process.terminate()
        await process.wait()


@contextlib.asynccontextmanager
async def _subscriber(stack: Stack) -> AsyncIterator[tuple[WorkflowHandle[Any, Any], Arrivals]]:
    """A fresh bare stream workflow and a subscriber to it."""
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


async def _until_all(queues: list[Arrivals], kind: str) -> float:
    """When the last of the watchers received a chunk of `kind`."""
    return max(await asyncio.gather(*(_until(q, kind) for q in queues)))


async def _history_length(stack: Stack, key: str) -> int:
    description = await stack.session(key).describe()
    return description.raw_info.history_length


async def idle_cost(stack: Stack, *, window: float) -> Measure:
    """History events per minute of a session watched by `IDLE_WATCHERS` clients and otherwise idle."""
    async with _sse(stack, IDLE_WATCHERS) as (key, queues):
        await synapse.send(stack, key, "hello")
        await _until_all(queues, "complete")
        await asyncio.sleep(SETTLE)
        before = await _history_length(stack, key)
        progress(f"stream: {IDLE_WATCHERS} watchers idle for {window:.0f} s")
        await asyncio.sleep(window)
        after = await _history_length(stack, key)
    return one((after - before) * 60 / window)


async def run(harness: Harness, *, samples: int, warmup: int, idle_window: float) -> Result:
    """Measure and return the stream rows."""
    async with (
        harness.stack("stream") as stack,
        contextlib.AsyncExitStack() as alone,
        contextlib.AsyncExitStack() as crowded,
        contextlib.AsyncExitStack() as streams,
    ):
        opened: dict[int, tuple[str, list[Arrivals]]] = {}
        subscribed: list[tuple[WorkflowHandle[Any, Any], Arrivals]] = []

        def sse_chunk(connections: contextlib.AsyncExitStack, watchers: int) -> Any:
            async def sample(i: int) -> float:
                if i % ROTATE_EVERY == 0:
                    await connections.aclose()  # the previous session's watchers leave
                    opened[watchers] = await connections.enter_async_context(_sse(stack, watchers))
                key, queues = opened[watchers]
                await asyncio.sleep(SETTLE)
                started = time.perf_counter()
                await synapse.send(stack, key, f"hello {i}")
                arrived = await _until_all(queues, "processing")
                await _until_all(queues, "complete")  # the turn ends before the next sample
                return arrived - started

            return sample

        async def bare_item(i: int) -> float:
            if i % ROTATE_EVERY == 0:
                await streams.aclose()
                subscribed[:] = [await streams.enter_async_context(_subscriber(stack))]
            handle, arrivals = subscribed[0]
            await asyncio.sleep(SETTLE)
            started = time.perf_counter()
            await handle.signal(BareStream.ping, f"item {i}")
            arrived = await _until(arrivals, f"item {i}")
            return arrived - started

        m = await alternate(
            "stream",
            {"synapse": sse_chunk(alone, 1), "crowd": sse_chunk(crowded, CROWD), "bare": bare_item},
            samples=samples,
            warmup=warmup,
        )
        idle = await idle_cost(stack, window=idle_window)
    cooldown = int(POLL_COOLDOWN.total_seconds() * 1000)
    bare_means = f"bare: signal → item at one WorkflowStreamClient subscriber (poll cooldown {cooldown} ms)"
    return Result(
        rows=[
            Row(
                "stream: publish → SSE client",
                "ms",
                m["synapse"],
                m["bare"],
                f"how soon an open event stream shows a new chunk; {bare_means}",
            ),
            Row(
                f"stream: publish → last of {CROWD} SSE clients",
                "ms",
                m["crowd"],
                m["bare"],
                f"{CROWD} people watching one session (reading in a process of their own) share the API's one subscription; {bare_means}",
            ),
            Row(
                f"stream: history events per idle minute, {IDLE_WATCHERS} watchers",
                "events",
                idle,
                None,
                "what watching costs a session that waits: nothing, however many watch",
            ),
        ]
    )
