"""One SSE client's queue: a keep-alive after `keepalive` seconds with nothing to send, none while
events keep coming, none once the stream ended or the client is gone, and a keep-alive waiting in
the queue never counts against the lag limit."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import pytest

from api.sse.subscriber import Event, Final, Subscriber
from contracts import TaskChunkType, TaskStreamChunk, Thinking

from ..conftest import assert_eventually

KEEPALIVE = 0.3


def event(offset: int) -> Event:
    chunk = TaskStreamChunk(
        workflow_id="session-t",
        sequence_id=offset,
        chunk_type=TaskChunkType.THINKING,
        content=Thinking(text=f"thought {offset}"),
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
    if max(gaps) < KEEPALIVE:  # the loop never stalled for a whole interval (it may, under load)
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


async def keepalive_waiting(subscriber: Subscriber) -> None:
    async def queued() -> bool:
        return subscriber.keepalive_queued

    await assert_eventually(queued, bool, within=10, interval=0.01, what="a keep-alive queued")


async def test_a_keepalive_waiting_in_the_queue_does_not_count_against_the_lag_limit() -> None:
    subscriber = Subscriber(0, limit=1, keepalive=0.05)
    try:
        await keepalive_waiting(subscriber)
        subscriber.offer([event(0)])  # one event behind: within the limit of 1
        assert await subscriber.next() is None
        assert await subscriber.next() == event(0), "the event, not a reconnect"
        assert subscriber.final is None
    finally:
        subscriber.close()


async def test_an_ended_stream_gets_no_keepalive_after_its_end() -> None:
    subscriber = Subscriber(0, limit=10, keepalive=0.05)
    try:
        subscriber.finish(Final("end"))
        assert await subscriber.next() == Final("end")
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(subscriber.next(), 0.05 * 4)
    finally:
        subscriber.close()
