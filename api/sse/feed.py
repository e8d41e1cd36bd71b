"""One subscription to one workflow's chunk stream, fanned out to every SSE client of this process.

However many people watch a session, this API process has one `watch` long-poll in flight on
it, so the workflow's history and update slots do not depend on the audience. The feed keeps
the last `replay` events in memory for clients that join or reconnect, formats each chunk
once, and offers it to every client without waiting for any (a slow one is dropped, see
`subscriber.py`).

When the last client leaves, the feed does not abandon its long-poll (an abandoned update
keeps its slot in the workflow until the next chunk): it lingers until the poll returns, and
a client arriving meanwhile simply joins. When the workflow refuses a watch (enough watchers
already, or no update slot free) the feed reads with the poll query every
`FALLBACK_POLL_SECONDS` for a while, then tries again. Transient Temporal errors are retried
for `RETRY_WITHIN_SECONDS`; after that every client gets an `error` event.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable
from typing import TypeVar

from contracts import TaskStreamChunk, WatchResult

from ..calls.busy import is_transient, retry_while_busy
from .events import chunk_event
from .source import Closed, Refused, StreamSource
from .subscriber import STOPPING, Event, Final, Subscriber

T = TypeVar("T")
log = logging.getLogger(__name__)

FALLBACK_POLL_SECONDS = 0.5
"""How often a feed whose watch was refused reads with the poll query instead."""
FALLBACK_PERIOD_SECONDS = 30.0
"""How long it does so before asking for a watch again."""
WATCH_COOLDOWN_SECONDS = 0.1
"""Pause after a watch answered before the next: chunks of a burst come in one answer, not one
each (every answer is an update completed in the workflow's history). The first chunk after a
quiet spell is not delayed: a watch is already waiting for it."""
CLOSING_PAUSE_SECONDS = 0.2
"""Wait before watching again when a run was ending (continue-as-new takes milliseconds)."""
RETRY_WITHIN_SECONDS = 15.0
"""How long transient Temporal errors (unavailable, busy) are retried before clients hear of them."""


class Feed:
    """Follows one workflow's stream from `start` and offers every chunk to its subscribers."""

    def __init__(
        self, source: StreamSource, start: int, *, replay: int, on_end: Callable[[Feed], None]
    ) -> None:
        self.source = source
        self.next_offset = start
        self._recent: deque[Event] = deque(maxlen=replay)
        """The last events, kept for clients that join or reconnect."""
        self._subscribers: set[Subscriber] = set()
        self._on_end = on_end
        self.ended = False
        self._task = asyncio.create_task(self._run(), name=f"feed of {source.workflow_id}")

    @property
    def clients(self) -> int:
        """Subscribers attached now."""
        return len(self._subscribers)

    def attach(self, subscriber: Subscriber) -> list[Event]:
        """Add a client: it is queued the events published from now on.

        Returns:
            The recent events this feed holds, for the client to send first, at its own pace
            (a backlog never counts against its lag limit); anything older it reads with the
            poll query itself.
        """
        self._subscribers.add(subscriber)
        subscriber.live_from(self.next_offset)
        return list(self._recent)

    def detach(self, subscriber: Subscriber) -> None:
        """Remove a client (the feed lingers until its long-poll returns, then stops)."""
        self._subscribers.discard(subscriber)

    async def close(self) -> None:
        """Stop following (the API is stopping); clients are told to reconnect."""
        self._task.cancel()
        await asyncio.gather(self._task, return_exceptions=True)

    async def _run(self) -> None:
        final = Final("end")
        try:
            await self._follow()
        except asyncio.CancelledError:
            final = Final("reconnect", STOPPING)
            raise
        except Exception as err:
            log.warning("following the stream of %s failed: %s", self.source.workflow_id, err)
            final = Final(
                "error", f"reading the stream of {self.source.workflow_id} from Temporal failed: {err}"
            )
        finally:
            self.ended = True
            self._on_end(self)
            for subscriber in list(self._subscribers):
                subscriber.finish(final)

    async def _follow(self) -> None:
        while True:
            answer = await self._retrying(lambda: self.source.watch(self.next_offset))
            if isinstance(answer, Closed):
                await self._read()  # what the closed run still holds
                return
            if isinstance(answer, Refused):
                log.debug("watch on %s refused (%s)", self.source.workflow_id, answer.reason)
                await self._poll_for(FALLBACK_PERIOD_SECONDS)
            else:
                await self._take(answer)
                if answer.closing:
                    await self._read()
                    if not await self._retrying(self.source.running):
                        await self._read()
                        return
                    await asyncio.sleep(CLOSING_PAUSE_SECONDS)  # the next run takes over
                else:
                    await asyncio.sleep(WATCH_COOLDOWN_SECONDS)
            if not self._subscribers:
                return

    async def _take(self, answer: WatchResult) -> None:
        """Fan out what a watch answered, and read what it could not carry."""
        self._fan_out(answer.chunks)
        if self.next_offset < answer.next_offset:
            await self._read(until=answer.next_offset)

    async def _poll_for(self, seconds: float) -> None:
        """Read with the poll query every `FALLBACK_POLL_SECONDS`, while anyone watches."""
        deadline = time.monotonic() + seconds
        while self._subscribers and time.monotonic() < deadline:
            await self._read()
            await asyncio.sleep(FALLBACK_POLL_SECONDS)

    async def _read(self, until: int | None = None) -> None:
        async def read() -> list[TaskStreamChunk]:
            return [chunk async for chunk in self.source.read(self.next_offset, until)]

        self._fan_out(await self._retrying(read))

    def _fan_out(self, chunks: list[TaskStreamChunk]) -> None:
        """Offer the chunks that continue the stream to every client, as one burst."""
        burst: list[Event] = []
        for chunk in chunks:
            if chunk.sequence_id != self.next_offset:
                if chunk.sequence_id < self.next_offset:
                    continue
                break  # a gap: the caller reads it with the query
            burst.append(Event(chunk.sequence_id, chunk_event(chunk), chunk))
            self.next_offset += 1
        if not burst:
            return
        self._recent.extend(burst)
        for subscriber in list(self._subscribers):
            subscriber.offer(burst)
            if subscriber.final is not None:
                self._subscribers.discard(subscriber)

    async def _retrying(self, call: Callable[[], Awaitable[T]]) -> T:
        """Run `call`, retrying transient Temporal errors for `RETRY_WITHIN_SECONDS`."""
        return await retry_while_busy(call, within=RETRY_WITHIN_SECONDS, retryable=is_transient)
