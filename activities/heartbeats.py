"""Heartbeats for the whole of an activity's work, so a worker that dies mid-way is noticed within
the activity's heartbeat timeout (not its start-to-close timeout) and the work is retried elsewhere."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from temporalio import activity

EVERY_SECONDS = 1.0
"""How often a running activity heartbeats; the worker sends at most one a second anyway
(`worker.HEARTBEAT_THROTTLE`)."""


async def heartbeat_while_running(first_after: float = 0.0, every: float = EVERY_SECONDS) -> None:
    """Heartbeat every `every` seconds, the first after `first_after`, until cancelled (or the
    activity ends): only a worker that is gone stops them."""
    if first_after > 0:
        await asyncio.sleep(first_after)
    while activity.in_activity():
        activity.heartbeat()
        await asyncio.sleep(every)


def heartbeat_interval() -> float:
    """How often the running activity heartbeats, the first time included: `EVERY_SECONDS`, or half
    its heartbeat timeout when that is shorter.

    The server counts the heartbeat timeout from the activity's start, so a heartbeat at once
    tells it nothing, and every heartbeat the SDK sends is a request that makes the server write
    the activity's state: an agent step that heartbeat at its start cost the server one such
    request per step, though most steps are done in milliseconds.
    """
    timeout = activity.info().heartbeat_timeout
    return min(EVERY_SECONDS, timeout.total_seconds() / 2) if timeout else EVERY_SECONDS


@contextlib.asynccontextmanager
async def heartbeating() -> AsyncIterator[None]:
    """Heartbeat while the block runs, every `heartbeat_interval()` from one interval in (a block
    done sooner sends none); a local activity has none to send (the workflow task it runs in is
    what a dead worker lets time out), so there the block just runs."""
    if activity.info().is_local:
        yield
        return
    interval = heartbeat_interval()
    beating = asyncio.create_task(heartbeat_while_running(first_after=interval, every=interval))
    try:
        yield
    finally:
        beating.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await beating
