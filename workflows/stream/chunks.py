"""A workflow's chunk stream: `TaskStreamChunk`s on a `workflow_streams` stream, and its watchers.

Every chunk (one event of `contracts.events`) goes on one topic; its `sequence_id` is its stream offset (the counter lives in the
workflow's state, so it continues across continue-as-new). Watchers long-poll through
`StreamWatch` (the `watch` update). Sessions use it now; graphs and their tasks will too.

Construct it in `@workflow.init` (the stream registers its handlers there). Publishing issues
no commands; changing what a chunk holds changes only what is published.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NoReturn, Protocol

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from temporalio.contrib.workflow_streams import WorkflowStream, WorkflowStreamState

    from contracts import StreamEvent, TaskStreamChunk

from .watch import StreamWatch

STREAM_TOPIC = "events"
"""The one topic every chunk is published on."""


class Publish(Protocol):
    """Publish one event on the workflow's stream (what the loop, supervision and outbox need)."""

    def __call__(self, event: StreamEvent) -> None:
        """Append the event's chunk (its sequence id is its stream offset)."""
        ...


class Numbered(Protocol):
    """The part of a state model that numbers chunks (carried across continue-as-new)."""

    next_sequence: int


class ChunkStream:
    """Publishes chunks for one workflow run and serves its watchers."""

    def __init__(self, owner_id: str, counter: Numbered, prior: WorkflowStreamState | None) -> None:
        """Register the stream (call from `@workflow.init`); `prior` carries it across runs."""
        self._owner_id = owner_id
        self._counter = counter
        self._stream = WorkflowStream(prior_state=prior)
        self._events = self._stream.topic(STREAM_TOPIC, type=TaskStreamChunk)
        self.watch = StreamWatch(counter.next_sequence)

    def publish(self, event: StreamEvent) -> None:
        """Append the event's chunk, of the event's chunk type and finality; its sequence_id is its
        stream offset (implements `Publish`)."""
        chunk = TaskStreamChunk(
            workflow_id=self._owner_id,
            chunk_type=event.chunk_type,
            sequence_id=self._counter.next_sequence,
            content=event,
            timestamp=workflow.now(),
            is_final=event.final,
        )
        self._counter.next_sequence += 1
        self._events.publish(chunk)
        self.watch.published(chunk)

    def snapshot(self) -> WorkflowStreamState:
        """The stream as continue-as-new would carry it (its retained chunks, encoded)."""
        return self._stream.get_state()

    def truncate(self, up_to_offset: int) -> None:
        """Drop retained chunks before `up_to_offset` (archive them first)."""
        self._stream.truncate(up_to_offset)

    def close(self) -> None:
        """The run is ending: release waiting watchers (before waiting for handlers to finish)."""
        self.watch.close()

    async def continue_as_new(self, build_args: Callable[[WorkflowStreamState], Sequence[Any]]) -> NoReturn:
        """Release watchers and pollers, wait for handlers, continue as new with the stream's state."""
        self.close()
        await self._stream.continue_as_new(build_args)
