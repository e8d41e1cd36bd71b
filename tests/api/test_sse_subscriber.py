"""One SSE client's queue: a keep-alive after `keepalive` seconds with nothing to send, none while
events keep coming, none once the client is gone."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import pytest

from api.sse.subscriber import Event, Final, Subscriber
from contracts import TaskChunkType, TaskStreamChunk

KEEPALIVE = 0.3


def event(offset: int) -> Event:
    chunk = TaskStreamChunk(
        workflow_id="session-t",
        sequence_id=offset,
        chunk_type=TaskChunkType.PROCESSING,
        content={"n": offset},
        timestamp=datetime(2026, 11, 27, tzinfo=UTC),
    )
    return Event(offset, f"id: {offset}\n\n", chunk)


async def test_an_idle_client_gets_a_keepalive_after_the_interval_not_sooner() -> None:
    loop = asyncio.get_running_loop()
    subscriber = Subscriber(0, limit=10, keepalive=KEEPALIVE)
    opened = loop.time()
    try:
        assert await asyncio.wait_for(subscriber.next(), 10) is None
        assert loop.time() - opened >= KEEPALIVE - 0.01
        assert await asyncio.wait_for(subscriber.next(), 10) is None, "and again while idle"
    finally:
        subscriber.close()


async def test_a_client_that_keeps_getting_events_gets_no_keepalive() -> None:
    loop = asyncio.get_running_loop()
    subscriber = Subscriber(0, limit=100, keepalive=KEEPALIVE)
    received: list[Event | Final | None] = []
    gaps, last = [], loop.time()
    try:
        for offset in range(20):
            await asyncio.sleep(KEEPALIVE / 6)  # the pace of the events, not a wait for a state
            subscriber.offer([event(offset)])
            now = loop.time()
            gaps.append(now - last)
            last = now
            received.append(await asyncio.wait_for(subscriber.next(), 10))
    finally:
        subscriber.close()
    if max(gaps) < KEEPALIVE:  # the loop never stalled for a whole interval
        assert [item.offset if isinstance(item, Event) else item for item in received] == list(range(20))


async def test_a_closed_client_gets_nothing_more() -> None:
    subscriber = Subscriber(0, limit=10, keepalive=KEEPALIVE)
    subscriber.close()
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(subscriber.next(), KEEPALIVE * 3)


async def test_a_client_behind_by_the_limit_is_dropped_with_a_reconnect() -> None:
    subscriber = Subscriber(0, limit=2, keepalive=KEEPALIVE)
    try:
        subscriber.offer([event(0), event(1)])
        subscriber.offer([event(2)])
        final = await asyncio.wait_for(subscriber.next(), 10)
        assert isinstance(final, Final) and final.kind == "reconnect"
    finally:
        subscriber.close()
