"""Sending a queue kept in the session's state in order, one item at a time, never failing the
session: the chat outbox (`outbox`) and the webhook notifications (`notifier`) both use it.

Determinism: the queue is state; what is sent and when comes from it and from activity results.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

from temporalio import workflow
from temporalio.exceptions import ActivityError, ApplicationError

T = TypeVar("T")


async def send_in_order(
    queue: list[T], send: Callable[[T], Awaitable[None]], failed: Callable[[T, str], None]
) -> None:
    """Forever: wait for an item, `send` it, tell `failed` why when its activity gave up, drop it."""
    while True:
        await workflow.wait_condition(lambda: bool(queue))
        item = queue[0]
        try:
            await send(item)
        except ActivityError as err:
            cause = err.cause
            failed(item, cause.message if isinstance(cause, ApplicationError) else str(cause or err))
        queue.pop(0)
