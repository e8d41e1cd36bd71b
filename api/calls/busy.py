"""Commands Temporal refuses for lack of room: retried with backoff, then the refusal is raised.

Temporal answers `RESOURCE_EXHAUSTED` when a workflow already has 10 updates in flight, or a
namespace is over its rate limits. Such a refusal is temporary: a decision, a message or a
pause is retried here until it gets through or its time is up, and only then does the caller
hear of it (`api/errors.py` answers 503 with `Retry-After`, never 500). "Message too large" is
also `RESOURCE_EXHAUSTED` but is not temporary.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

from temporalio.service import RPCError, RPCStatusCode

T = TypeVar("T")

FIRST_DELAY = 0.05
"""Seconds before the first retry; doubled after each, up to `MAX_DELAY`."""
MAX_DELAY = 1.0
RETRY_AFTER_SECONDS = 2
"""How long a caller refused for now should wait before trying again (the 503's `Retry-After`)."""
_TOO_LARGE = ("grpc: received message larger than max", "grpc: message after decompression larger than max")


def is_busy(err: RPCError) -> bool:
    """Whether Temporal refused the call for now (worth retrying soon).

    For lack of room (RESOURCE_EXHAUSTED), or because the workflow's current task just failed
    and is being retried (FAILED_PRECONDITION, `WorkflowNotReady`): updates wait for it.
    """
    if err.status == RPCStatusCode.FAILED_PRECONDITION:
        return "WorkflowNotReady" in str(err.raw_grpc_status) or "workflow task failure" in err.message
    return err.status == RPCStatusCode.RESOURCE_EXHAUSTED and not any(
        marker in err.message for marker in _TOO_LARGE
    )


def busy_detail(err: RPCError) -> str:
    """What to tell the caller of a refusal `is_busy` recognised."""
    return (
        f"Temporal has no room for this request right now ({err.message}); "
        f"nothing was applied, retry in {RETRY_AFTER_SECONDS} s"
    )


def is_transient(err: RPCError) -> bool:
    """Busy, or Temporal unreachable for a moment (a server restarting)."""
    return is_busy(err) or err.status in (RPCStatusCode.UNAVAILABLE, RPCStatusCode.DEADLINE_EXCEEDED)


async def retry_while_busy(
    call: Callable[[], Awaitable[T]], *, within: float, retryable: Callable[[RPCError], bool] = is_busy
) -> T:
    """Run `call`, retrying with backoff while Temporal is busy, for at most `within` seconds.

    The last refusal is raised when the time is up (`api/errors.py` makes it a 503).
    `retryable` widens what is retried (e.g. `is_transient` for reads). Temporal's client itself
    retries a refusal for about 15 s before raising it (an attempt is never cut short: it could
    still be admitted), so a command may take up to one such round longer than `within`.
    """
    deadline = time.monotonic() + within
    delay = FIRST_DELAY
    while True:
        try:
            return await call()
        except RPCError as err:
            if not retryable(err) or time.monotonic() + delay > deadline:
                raise
        await asyncio.sleep(delay)
        delay = min(delay * 2, MAX_DELAY)
