"""A watcher that follows a workflow's stream from its first chunk to its end while a scenario is
recorded, as the API's event stream does (`watch` long-polls).

Each `watch` answer is an update's result, so every event the workflow publishes lands in the
recorded history, where replay reads it back (`test_event_kinds.py` checks that every kind does).
The scenario can wait for the events it has seen (`seen`).
"""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

from temporalio.client import WorkflowHandle, WorkflowUpdateFailedError, WorkflowUpdateHandle
from temporalio.service import RPCError

from contracts import WatchRequest, WatchResult
from workflows.supervision.handlers import StreamHandlers

from ..conftest import assert_eventually


class Follower:
    """Follows one workflow run's stream until the run closes; counts the kinds it saw."""

    def __init__(
        self, handle: WorkflowHandle[Any, Any], first: WorkflowUpdateHandle[WatchResult] | None = None
    ) -> None:
        """Follow `handle`'s stream from offset 0; `first`: a watch from 0 already sent (with the
        workflow's start, so that it is there for events its first workflow tasks publish)."""
        self._handle = handle
        self.kinds: Counter[str] = Counter()
        self._task = asyncio.create_task(self._follow(first))

    async def _follow(self, first: WorkflowUpdateHandle[WatchResult] | None) -> None:
        offset = 0
        while True:
            try:
                if first is not None:
                    result, first = await first.result(), None
                else:
                    result = await self._handle.execute_update(
                        StreamHandlers.watch, WatchRequest(next_offset=offset)
                    )
            except (WorkflowUpdateFailedError, RPCError):  # the run closed between two watches
                return
            self.kinds.update(chunk.content.event for chunk in result.chunks if chunk.sequence_id >= offset)
            offset = result.next_offset
            if result.closing:
                return

    async def seen(self, kind: str, count: int = 1, within: float = 60) -> None:
        """Wait until the stream has carried `count` events of `kind`."""

        async def kinds() -> Counter[str]:
            return self.kinds

        await assert_eventually(
            kinds, lambda kinds: kinds[kind] >= count, within=within, what=f"{count} × {kind}"
        )

    async def done(self) -> Counter[str]:
        """Wait for the run's end (the last watch answers then); the kinds seen."""
        await self._task
        return self.kinds
