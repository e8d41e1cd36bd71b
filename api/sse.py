"""Server-sent events: a session's stream chunks, resumable by sequence id."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta

from temporalio.client import Client
from temporalio.contrib.workflow_streams import WorkflowStreamClient

from contracts import TaskStreamChunk
from workflows.session import STREAM_TOPIC

POLL_COOLDOWN = timedelta(milliseconds=100)
"""Pause between long-polls when caught up: each poll is an update and adds history."""


def format_event(chunk: TaskStreamChunk) -> str:
    """One SSE event: `id:` is the chunk's sequence id, `event:` its type, `data:` its JSON."""
    return f"id: {chunk.sequence_id}\nevent: {chunk.chunk_type.value}\ndata: {chunk.model_dump_json()}\n\n"


async def session_events(client: Client, workflow_id: str, first: int) -> AsyncIterator[str]:
    """SSE text for every chunk from sequence id `first` on, until the session closes."""
    stream = WorkflowStreamClient.create(client, workflow_id)
    yield "retry: 1000\n\n"
    async for item in stream.subscribe(
        [STREAM_TOPIC], from_offset=first, result_type=TaskStreamChunk, poll_cooldown=POLL_COOLDOWN
    ):
        yield format_event(item.data)
