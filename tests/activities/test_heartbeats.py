"""`heartbeating()`: a block done before its first heartbeat is due sends none; a longer one beats."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import time
from collections.abc import Callable
from datetime import timedelta

import pytest
from temporalio.testing import ActivityEnvironment

from activities import heartbeats
from activities.heartbeats import heartbeat_interval, heartbeating

WITHIN = 10.0


def environment(heartbeat_timeout: timedelta | None, on_beat: Callable[[], None]) -> ActivityEnvironment:
    """An activity's context with this heartbeat timeout, calling `on_beat` for each heartbeat."""
    env = ActivityEnvironment()
    env.info = dataclasses.replace(env.info, heartbeat_timeout=heartbeat_timeout)
    env.on_heartbeat = lambda *_details: on_beat()
    return env


async def test_a_quick_block_sends_no_heartbeat() -> None:
    beats: list[float] = []

    async def quick_step() -> None:
        async with heartbeating():
            for _ in range(5):  # a step's few milliseconds of work, yielding to the loop
                await asyncio.sleep(0.002)

    await environment(timedelta(seconds=30), lambda: beats.append(time.monotonic())).run(quick_step)

    assert beats == []


async def test_a_long_block_beats_every_half_heartbeat_timeout_from_one_in() -> None:
    beats: list[float] = []
    three = asyncio.Event()

    def beat() -> None:
        beats.append(time.monotonic())
        if len(beats) >= 3:
            three.set()

    async def long_step() -> float:
        started = time.monotonic()
        async with heartbeating():
            with contextlib.suppress(TimeoutError):  # the assertions below say what was missing
                await asyncio.wait_for(three.wait(), WITHIN)
        return started

    started = await environment(timedelta(seconds=0.2), beat).run(long_step)

    assert len(beats) >= 3, "a block that outlasts its first heartbeat keeps beating"
    assert beats[0] - started >= 0.1, "none before half the heartbeat timeout"


async def test_the_block_beats_at_its_interval_from_one_interval_in(monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[tuple[float, float]] = []

    async def recorded(first_after: float = 0.0, every: float = heartbeats.EVERY_SECONDS) -> None:
        asked.append((first_after, every))

    monkeypatch.setattr(heartbeats, "heartbeat_while_running", recorded)

    async def step() -> None:
        async with heartbeating():
            await asyncio.sleep(0)

    await environment(timedelta(seconds=0.6), lambda: None).run(step)

    assert asked == [(0.3, 0.3)]


@pytest.mark.parametrize(
    ("timeout", "due"),
    [(None, 1.0), (timedelta(seconds=30), 1.0), (timedelta(seconds=1), 0.5), (timedelta(seconds=0.2), 0.1)],
)
def test_the_interval_is_a_second_or_half_the_heartbeat_timeout(
    timeout: timedelta | None, due: float
) -> None:
    assert environment(timeout, lambda: None).run(heartbeat_interval) == pytest.approx(due)
