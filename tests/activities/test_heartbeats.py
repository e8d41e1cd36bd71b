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
from activities.heartbeats import first_heartbeat_after, heartbeating

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


async def test_a_long_block_beats_from_half_its_heartbeat_timeout_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(heartbeats, "EVERY_SECONDS", 0.3)
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


@pytest.mark.parametrize(
    ("timeout", "due"),
    [(None, 1.0), (timedelta(seconds=30), 1.0), (timedelta(seconds=1), 0.5), (timedelta(seconds=0.2), 0.1)],
)
def test_the_first_heartbeat_is_due_within_half_the_timeout(timeout: timedelta | None, due: float) -> None:
    assert environment(timeout, lambda: None).run(first_heartbeat_after) == pytest.approx(due)
