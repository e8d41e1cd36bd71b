"""Heartbeats for the whole of an activity's work, so a worker that dies mid-way is noticed within
the activity's heartbeat timeout (not its start-to-close timeout) and the work is retried elsewhere."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from temporalio import activity

EVERY_SECONDS = 1.0
"""The SDK sends at most one heartbeat per 0.8 heartbeat timeout; this only keeps one ready."""


async def heartbeat_while_running(first_after: float = 0.0) -> None:
    """Heartbeat until cancelled (or the activity ends), the first after `first_after` seconds:
    only a worker that is gone stops them."""
    if first_after > 0:
        await asyncio.sleep(first_after)
    while activity.in_activity():
        activity.heartbeat()
        await asyncio.sleep(EVERY_SECONDS)


def first_heartbeat_after() -> float:
    """When the running activity's first heartbeat is due: `EVERY_SECONDS`, or half its heartbeat
    timeout when that is shorter.

    The server counts the heartbeat timeout from the activity's start, so a heartbeat at once
    tells it nothing, and every heartbeat the SDK sends is a request that makes the server write
    the activity's state: an agent step that heartbeat at its start cost the server one such
    request per step, though most steps are done in milliseconds.
    """
    timeout = activity.info().heartbeat_timeout
    return min(EVERY_SECONDS, timeout.total_seconds() / 2) if timeout else EVERY_SECONDS


@contextlib.asynccontextmanager
async def heartbeating() -> AsyncIterator[None]:
    """Heartbeat while the block runs, from `first_heartbeat_after()` on (a block done sooner sends
    none); a local activity has none to send (the workflow task it runs in is what a dead worker
    lets time out), so there the block just runs."""
    if activity.info().is_local:
        yield
        return
    beating = asyncio.create_task(heartbeat_while_running(first_heartbeat_after()))
    try:
        yield
    finally:
        beating.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await beating
