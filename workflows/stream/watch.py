"""Watchers' long-polls on a workflow's chunk stream: the `watch` update, capped.

Temporal lets 10 updates be in flight per workflow, and a decision (approve, pause, cancel) is
an update too. A long-poll the API abandons stays in flight in the workflow until it returns
(the server has no way to cancel it), so watchers are capped here, in the workflow, whatever
number of API processes follow the stream: a `watch` beyond `MAX_WATCHERS` is rejected by the
validator (`TooManyWatchers`, nothing reaches history) and that watcher reads the stream with
the poll query instead. An idle watch waits on a condition, not a timer: it adds no history.

A watch answers with the new chunks themselves when they are in the recent tail kept here (so
an open event stream shows a chunk one update round trip after it is published); otherwise
with the stream's length only, and the watcher reads the chunks with the stream's poll query.

Used by every workflow that publishes chunks: call `published` for each chunk, `close` before
the run ends or continues as new (waiting watches return, new ones are refused), and expose
`wait`/`check` as the `watch` update and its validator. Changing what a watch waits for or
returns changes only update results, never the workflow's commands.
"""

from __future__ import annotations

from collections import deque

from temporalio import workflow
from temporalio.exceptions import ApplicationError

with workflow.unsafe.imports_passed_through():
    from contracts import ErrorType, TaskStreamChunk, WatchRequest, WatchResult

MAX_WATCHERS = 3
"""Watches in flight at once; the other 7 of Temporal's 10 update slots stay free for decisions."""
TAIL_CHUNKS = 64
"""Recent chunks kept to answer a watch directly."""
TAIL_BYTES = 256 * 1024
"""Bound on the JSON size of the chunks one watch answer carries (Temporal's blob limit is 2 MB)."""


class StreamWatch:
    """The `watch` long-polls of one workflow run: in-flight count, recent chunks, closing."""

    def __init__(self, next_offset: int) -> None:
        self._next_offset = next_offset
        self._tail: deque[tuple[TaskStreamChunk, int]] = deque(maxlen=TAIL_CHUNKS)
        self._in_flight = 0
        self._closing = False

    def published(self, chunk: TaskStreamChunk) -> None:
        """Record a chunk just published on the stream (its sequence id is its offset)."""
        self._tail.append((chunk, len(chunk.model_dump_json())))
        self._next_offset = chunk.sequence_id + 1

    def close(self) -> None:
        """The run is ending: waiting watches return now, new ones are refused."""
        self._closing = True

    @property
    def watched(self) -> bool:
        """Whether a watch waits now (someone follows the stream)."""
        return self._in_flight > 0

    def check(self, request: WatchRequest) -> None:
        """Validator: refuse a watch on a closing run, or beyond `MAX_WATCHERS`."""
        if self._closing:
            raise ApplicationError(
                "this run is ending; read the rest of the stream with its poll query",
                type=ErrorType.STREAM_CLOSING,
                non_retryable=True,
            )
        if self._in_flight >= MAX_WATCHERS:
            raise ApplicationError(
                f"{self._in_flight} watches are already waiting (at most {MAX_WATCHERS}, so "
                "decisions always find a free update slot); poll the stream with its query instead",
                type=ErrorType.TOO_MANY_WATCHERS,
                non_retryable=True,
            )

    async def wait(self, request: WatchRequest) -> WatchResult:
        """Wait until the stream passes `request.next_offset` or the run ends."""
        self._in_flight += 1
        try:
            await workflow.wait_condition(lambda: self._next_offset > request.next_offset or self._closing)
        finally:
            self._in_flight -= 1
        return WatchResult(
            next_offset=self._next_offset,
            chunks=self._chunks_from(request.next_offset),
            closing=self._closing,
        )

    def _chunks_from(self, offset: int) -> list[TaskStreamChunk]:
        """The chunks from `offset` on that the tail holds, as many as fit one answer."""
        if not self._tail or self._tail[0][0].sequence_id > offset:
            return []
        chunks: list[TaskStreamChunk] = []
        size = 0
        for chunk, chunk_size in self._tail:
            if chunk.sequence_id < offset:
                continue
            size += chunk_size
            if size > TAIL_BYTES:
                break
            chunks.append(chunk)
        return chunks
