"""One workflow's chunk stream as the API reads it: the `watch` update and the stream's poll query.

`watch` is a long-poll (see `workflows/stream/watch.py`): one in flight per followed workflow per
API process, never abandoned (an abandoned update keeps its slot until the next chunk). The poll
query of `temporalio.contrib.workflow_streams` (`PollInput` → `PollResult`, a public protocol)
reads retained chunks from any offset: no history, no update slot, so catch-up reads and the
fallback when a watch is refused cost the workflow nothing.
"""

from __future__ import annotations

import asyncio
import base64
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import timedelta

from temporalio.api.common.v1 import Payload
from temporalio.client import (
    Client,
    WorkflowExecutionStatus,
    WorkflowUpdateFailedError,
    WorkflowUpdateRPCTimeoutOrCancelledError,
    WorkflowUpdateStage,
)
from temporalio.contrib.workflow_streams import PollInput, PollResult
from temporalio.exceptions import ApplicationError
from temporalio.service import RPCError, RPCStatusCode

from contracts import ArchiveCursor, ErrorType, TaskStreamChunk, WatchRequest, WatchResult
from contracts.names import GET_ARCHIVE, WATCH
from core.artifacts import ArtifactStore
from workflows.stream.chunks import STREAM_TOPIC

from ..calls.archive import archived_items
from ..calls.busy import is_busy
from ..calls.workflow import ask, update_id

log = logging.getLogger(__name__)

POLL_QUERY = "__temporal_workflow_stream_poll"
"""The stream's read-only poll query (the same name as its long-poll update)."""
READ_WAIT = timedelta(seconds=60)
"""How long a read of the stream waits for the workflow's worker (asked again meanwhile:
`calls.workflow.ask`) before the stream ends with an error: a worker replaying a long history
after a restart takes seconds."""
REFUSALS = {ErrorType.TOO_MANY_WATCHERS, ErrorType.STREAM_CLOSING}
"""`watch` rejections that mean "read with the query for now" (the validator's error types)."""


@dataclass(frozen=True)
class Refused:
    """The workflow has no watch slot for us now (or is ending): read with the query meanwhile."""

    reason: str


@dataclass(frozen=True)
class Closed:
    """The workflow is closed: what is left of its stream can only be read with the query."""


class StreamSource:
    """Reads one workflow's chunk stream (latest run: continue-as-new is followed)."""

    def __init__(self, client: Client, workflow_id: str, store: ArtifactStore | None = None) -> None:
        """`store` holds the chunks the workflow archived when it trimmed its stream."""
        self.workflow_id = workflow_id
        self._handle = client.get_workflow_handle(workflow_id)
        self._converter = client.data_converter.payload_converter
        self._store = store

    async def watch(self, next_offset: int) -> WatchResult | Refused | Closed:
        """Wait for chunks from `next_offset` on; a refusal or a closed workflow is an answer too."""
        try:
            update = await self._handle.start_update(
                WATCH,
                WatchRequest(next_offset=next_offset),
                id=update_id(),
                wait_for_stage=WorkflowUpdateStage.ACCEPTED,
                result_type=WatchResult,
            )
            while True:
                try:
                    result: WatchResult = await update.result()
                    return result
                except WorkflowUpdateRPCTimeoutOrCancelledError:
                    if _being_cancelled():
                        raise
                    # Only this RPC gave up; the update itself is still waiting: keep polling it.
        except WorkflowUpdateRPCTimeoutOrCancelledError as err:
            if _being_cancelled():
                raise asyncio.CancelledError from err
            return Refused("the watch was not accepted in time")
        except WorkflowUpdateFailedError as err:
            cause = err.cause
            if isinstance(cause, ApplicationError) and cause.type in REFUSALS:
                return Refused(cause.message)
            if not await self.running():  # it closed with the watch in flight (terminated, say)
                return Closed()
            # E.g. a run on a worker whose code has no `watch` yet: the query still reads it.
            log.warning("watch on %s failed (%s); reading with the poll query", self.workflow_id, cause)
            return Refused(str(cause))
        except RPCError as err:
            if err.status == RPCStatusCode.NOT_FOUND:
                # The run closed, or (across a server restart) the update was lost: look which.
                return (
                    Refused("the watch was lost; the run is still going")
                    if await self.running()
                    else Closed()
                )
            if is_busy(err):
                return Refused(f"Temporal has no update slot free: {err.message}")
            raise

    async def read(self, from_offset: int, until: int | None = None) -> AsyncIterator[TaskStreamChunk]:
        """Retained chunks from `from_offset` on: up to `until` (exclusive), or all there are now."""
        offset = from_offset
        first = True
        while True:
            result: PollResult = await ask(
                self._handle,
                POLL_QUERY,
                PollInput(topics=[STREAM_TOPIC], from_offset=offset),
                result_type=PollResult,
                wait=READ_WAIT,
            )
            retained_from = result.items[0].offset if result.items else result.next_offset
            if first and offset < retained_from:  # trimmed at a continue-as-new: read the archive
                end = retained_from if until is None else min(until, retained_from)
                for chunk in await self._archived(offset, end):
                    yield chunk
            first = False
            for item in result.items:
                if until is not None and item.offset >= until:
                    return
                yield self._decode(item.data)
            if result.next_offset <= offset:
                return  # nothing more retained
            offset = result.next_offset
            if until is None and not result.more_ready:
                return
            if until is not None and offset >= until:
                return

    async def _archived(self, start: int, end: int) -> list[TaskStreamChunk]:
        if self._store is None or start >= end:
            return []
        cursor: ArchiveCursor = await ask(
            self._handle, GET_ARCHIVE, "stream", result_type=ArchiveCursor, wait=READ_WAIT
        )
        wires = await archived_items(self._store, cursor, start, end)
        return [self._decode(wire) for wire in wires]

    async def running(self) -> bool:
        """Whether the workflow's latest run is still running (false once it closed for good)."""
        description = await self._handle.describe()
        return description.status == WorkflowExecutionStatus.RUNNING

    def _decode(self, wire: str) -> TaskStreamChunk:
        payload = Payload()
        payload.ParseFromString(base64.b64decode(wire))
        chunk: TaskStreamChunk = self._converter.from_payload(payload, TaskStreamChunk)
        return chunk


def _being_cancelled() -> bool:
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0
