"""Heartbeats for the whole of an activity's work, so a worker that dies mid-way is noticed within
the activity's heartbeat timeout (not its start-to-close timeout) and the work is retried elsewhere."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from temporalio import activity

EVERY_SECONDS = 1.0
"""The SDK sends at most one heartbeat per 0.8 heartbeat timeout; this only keeps one ready."""


async def heartbeat_while_running() -> None:
    """Heartbeat until cancelled (or the activity ends): only a worker that is gone stops them."""
    while activity.in_activity():
        activity.heartbeat()
        await asyncio.sleep(EVERY_SECONDS)


@contextlib.asynccontextmanager
async def heartbeating() -> AsyncIterator[None]:
    """Heartbeat while the block runs; a local activity has none to send (the workflow task it runs
    in is what a dead worker lets time out), so there the block just runs."""
    if activity.info().is_local:
        yield
        return
    beating = asyncio.create_task(heartbeat_while_running())
    try:
        yield
    finally:
        beating.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await beating
