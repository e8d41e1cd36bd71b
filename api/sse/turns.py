"""Following one message's turn on the session's stream: the SYNC and ASYNC_STREAM modes of
`POST /sessions/{key}/messages`.

The API gives each HTTP message an id; the session's `processing` chunk for it carries that id in
its metadata, so the turn is found on the shared stream (`StreamHub.follow`) even when other turns
ran before it. A turn ends with a final chunk (`complete`) or `cancelled`; it waits for a person
when it publishes a `tool_approval_request` or `user_input_request`.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import aclosing
from datetime import datetime
from typing import Any

from contracts import InteractionRequest, InteractionType, MessageAccepted, TaskChunkType, TaskStreamChunk

from .hub import StreamHub, sse_text
from .subscriber import Event, Final

ASKS = (TaskChunkType.TOOL_APPROVAL_REQUEST, TaskChunkType.USER_INPUT_REQUEST)


def _ends(chunk: TaskStreamChunk) -> bool:
    return chunk.is_final or chunk.chunk_type == TaskChunkType.CANCELLED


async def turn_chunks(
    hub: StreamHub, workflow_id: str, after: int, message_id: str
) -> AsyncGenerator[Event | Final | None]:
    """The events of the turn of `message_id` (from its `processing` chunk to its final one), then
    `Final` when the stream ended first; None while idle."""
    started = False
    async with aclosing(hub.follow(workflow_id, after)) as items:
        async for item in items:
            if item is None or isinstance(item, Final):
                yield item
                if item is not None:
                    return
                continue
            chunk = item.chunk
            if not started:  # its own turn's start, or (a reply to a request) its decision
                started = chunk.metadata.get("message_id") == message_id
                if not started:
                    continue
            yield item
            if _ends(chunk):
                return


def pending_of(chunk: TaskStreamChunk) -> InteractionRequest:
    """The request a `tool_approval_request` / `user_input_request` chunk announces."""
    meta = chunk.metadata
    expires, escalates = meta.get("expires_at"), meta.get("escalate_at")
    return InteractionRequest(
        interaction_id=str(meta.get("interaction_id")),
        interaction_type=InteractionType(meta.get("interaction_type", InteractionType.TOOL_APPROVAL)),
        workflow_id=str(meta.get("workflow_id") or chunk.workflow_id),
        content=chunk.content if isinstance(chunk.content, str | dict) else str(chunk.content),
        timestamp=chunk.timestamp,
        approvers=list(meta.get("approvers") or []),
        requested_by=meta.get("requested_by"),
        expires_at=datetime.fromisoformat(expires) if isinstance(expires, str) else None,
        approvals_required=int(meta.get("approvals_required") or 1),
        escalate_to=list(meta.get("escalate_to") or []),
        escalate_at=datetime.fromisoformat(escalates) if isinstance(escalates, str) else None,
        ask=meta.get("ask"),
    )


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
                    reply = chunk.metadata.get("message_id") == accepted.message_id  # a chat reply's own
                    if reply and chunk.metadata.get("reply_refused"):  # it could not decide
                        return accepted.model_copy(
                            update={"status": "failed", "answer": chunk.content, "next_offset": next_offset}
                        )
                    if reply and "approvals" in (chunk.content if isinstance(chunk.content, dict) else {}):
                        return accepted.model_copy(  # one approval of two counted: it still waits
                            update={"status": "waiting", "answer": chunk.content, "next_offset": next_offset}
                        )
                    if chunk.chunk_type in ASKS:
                        return accepted.model_copy(
                            update={
                                "status": "waiting",
                                "pending": pending_of(chunk),
                                "next_offset": next_offset,
                            }
                        )
                    if chunk.chunk_type in (TaskChunkType.RESPONSE, TaskChunkType.ERROR):
                        answer = chunk.content
                        status = "completed" if chunk.chunk_type == TaskChunkType.RESPONSE else "failed"
                    if chunk.chunk_type == TaskChunkType.CANCELLED:
                        return accepted.model_copy(
                            update={
                                "status": "cancelled",
                                "answer": chunk.content,
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


def turn_events(hub: StreamHub, workflow_id: str, after: int, message_id: str) -> AsyncIterator[str]:
    """ASYNC_STREAM: the turn's chunks as server-sent events, ending with the turn."""
    return sse_text(turn_chunks(hub, workflow_id, after, message_id), after)
