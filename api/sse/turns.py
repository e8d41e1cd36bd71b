"""Following one message's turn on the session's stream: the SYNC and ASYNC_STREAM modes of
`POST /sessions/{key}/messages`.

The API gives each HTTP message an id; the session's `TurnStarted` event for it carries that id,
so the turn is found on the shared stream (`StreamHub.follow`) even when other turns ran before
it (a reply that decided a request: its `DecisionTaken`, `ApprovalCounted` or `ReplyRefused`). A
turn ends with a final event (`TurnCompleted`) or a cancellation; it waits for a person when it
announces a request (`RequestOpened`, `QuestionAsked`).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from contextlib import aclosing
from typing import Any

from contracts import (
    ApprovalCounted,
    Asking,
    DecisionTaken,
    MessageAccepted,
    ReplyRefused,
    StreamEvent,
    TaskChunkType,
    TaskStreamChunk,
    TurnAnswered,
    TurnStarted,
)

from .hub import StreamHub, sse_text
from .subscriber import Event, Final


def message_of(chunk: TaskStreamChunk) -> str | None:
    """The message whose turn (or reply) the chunk's event belongs to, if it names one."""
    event = chunk.content
    if isinstance(event, TurnStarted | DecisionTaken | ApprovalCounted | ReplyRefused):
        return event.message_id
    return None


def _ends(chunk: TaskStreamChunk) -> bool:
    return chunk.is_final or chunk.chunk_type == TaskChunkType.CANCELLED


def turn_chunks(
    hub: StreamHub, workflow_id: str, after: int, message_id: str
) -> AsyncGenerator[Event | Final | None]:
    """The events of the turn of `message_id` (from its `processing` chunk to its final one), then
    `Final` when the stream ended first; None while idle."""
    return chunks_from(hub, workflow_id, after, lambda chunk: message_of(chunk) == message_id)


async def chunks_from(
    hub: StreamHub, workflow_id: str, after: int, starts: Callable[[TaskStreamChunk], bool]
) -> AsyncGenerator[Event | Final | None]:
    """The chunks after `after` from the first that `starts` (a turn's start, or the decision a
    caller took) to the turn's final one, then `Final` when the stream ended first; None while idle."""
    started = False
    async with aclosing(hub.follow(workflow_id, after)) as items:
        async for item in items:
            if item is None or isinstance(item, Final):
                yield item
                if item is not None:
                    return
                continue
            chunk = item.chunk
            if not started:
                started = starts(chunk)
                if not started:
                    continue
            yield item
            if _ends(chunk):
                return


async def wait_for_turn(
    hub: StreamHub, accepted: MessageAccepted, after: int, within: float
) -> MessageAccepted:
    """SYNC: the turn's answer when it ends, what it waits for when it asks a person, or `running`."""
    assert accepted.message_id is not None
    answer: Any = None
    status = "completed"
    next_offset = after + 1
    try:
        async with asyncio.timeout(within):
            async with aclosing(turn_chunks(hub, accepted.workflow_id, after, accepted.message_id)) as chunks:
                async for item in chunks:
                    if item is None:
                        continue
                    if isinstance(item, Final):
                        detail = item.detail or "the session's stream ended before the turn did"
                        return accepted.model_copy(
                            update={"status": "running", "answer": detail, "next_offset": next_offset}
                        )
                    chunk = item.chunk
                    next_offset = chunk.sequence_id + 1
                    event = chunk.content
                    reply = message_of(chunk) == accepted.message_id  # a chat reply's own
                    if reply and isinstance(event, ReplyRefused):  # it could not decide
                        return accepted.model_copy(
                            update={"status": "failed", "answer": _dumped(event), "next_offset": next_offset}
                        )
                    if reply and isinstance(event, ApprovalCounted):  # one approval of two: it still waits
                        return accepted.model_copy(
                            update={"status": "waiting", "answer": _dumped(event), "next_offset": next_offset}
                        )
                    if isinstance(event, Asking):
                        return accepted.model_copy(
                            update={"status": "waiting", "pending": event.request, "next_offset": next_offset}
                        )
                    if isinstance(event, TurnAnswered):
                        answer, status = event.answer, "completed"
                    elif chunk.chunk_type == TaskChunkType.ERROR:
                        answer, status = _dumped(event), "failed"
                    if chunk.chunk_type == TaskChunkType.CANCELLED:
                        return accepted.model_copy(
                            update={
                                "status": "cancelled",
                                "answer": _dumped(event),
                                "next_offset": next_offset,
                            }
                        )
                    if _ends(chunk):
                        return accepted.model_copy(
                            update={"status": status, "answer": answer, "next_offset": next_offset}
                        )
    except TimeoutError:
        pass
    return accepted.model_copy(update={"status": "running", "next_offset": next_offset})


def _dumped(event: StreamEvent) -> Any:
    """An event as a turn's answer (what it says, typed: the event's JSON)."""
    return event.model_dump(mode="json")


def turn_events(hub: StreamHub, workflow_id: str, after: int, message_id: str) -> AsyncIterator[str]:
    """ASYNC_STREAM: the turn's chunks as server-sent events, ending with the turn."""
    return sse_text(turn_chunks(hub, workflow_id, after, message_id), after, workflow_id)
