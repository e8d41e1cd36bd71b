"""Reading workflow histories: event counts, and waiting for an event by the server's long-poll.

Waiting on history (`wait_new_event=True`) costs the server one answer per new batch of events
and the worker nothing, unlike polling a query, whose load grows with the time waited; under
load (many sessions at once) that matters.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable
from typing import Any

from temporalio.api.enums.v1 import EventType
from temporalio.api.history.v1 import HistoryEvent
from temporalio.client import WorkflowHandle
from temporalio.converter import decode_typed_search_attributes

from contracts import SessionConfig
from workflows.identity.search_attributes import STATUS

IDLE_TIMEOUT = SessionConfig.model_fields["idle_timeout_seconds"].default


async def event_counts(handle: WorkflowHandle[Any, Any]) -> tuple[Counter[str], int]:
    """Events of the workflow's history by type (`workflow_task_completed`, ...), and the history's
    size in bytes (its events as the server stores and sends them, payloads included)."""
    history = await handle.fetch_history()
    kinds = Counter(
        EventType.Name(event.event_type).removeprefix("EVENT_TYPE_").lower() for event in history.events
    )
    return kinds, sum(event.ByteSize() for event in history.events)


async def wait_event(
    handle: WorkflowHandle[Any, Any], found: Callable[[HistoryEvent], bool], *, within: float, what: str
) -> HistoryEvent:
    """The first history event (old or new) for which `found` holds."""
    try:
        async with asyncio.timeout(within):
            async for event in handle.fetch_history_events(wait_new_event=True):
                if found(event):
                    return event
    except TimeoutError:
        raise RuntimeError(f"{what}: no such event within {within} s in {handle.id}") from None
    raise RuntimeError(f"{what}: {handle.id} closed without such an event")


def sets_status(status: str) -> Callable[[HistoryEvent], bool]:
    """An event that upserts the `SynapseStatus` search attribute to `status`."""

    def found(event: HistoryEvent) -> bool:
        if event.event_type != EventType.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES:
            return False
        attributes = event.upsert_workflow_search_attributes_event_attributes.search_attributes
        return decode_typed_search_attributes(attributes).get(STATUS) == status

    return found


def activity_completed(event: HistoryEvent) -> bool:
    """An activity task completed."""
    return event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED


def task_completed(event: HistoryEvent) -> bool:
    """A workflow task completed (for a bare workflow: it ran and now waits)."""
    return event.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED


def waits_idle(event: HistoryEvent) -> bool:
    """The session's idle timer started: its turn is over, nothing more is written until the next
    message (a history read before this may end in the turn's last workflow task, still running)."""
    return (
        event.event_type == EventType.EVENT_TYPE_TIMER_STARTED
        and event.timer_started_event_attributes.start_to_fire_timeout.seconds == IDLE_TIMEOUT
    )
