"""The API process's stream hub: one feed per watched workflow, any number of SSE clients each.

`events(workflow_id, after)` is the body of an SSE response: the chunks after `after` the
client lacks (older ones read with the poll query, recent ones from the feed's memory), then
the live ones, keep-alive comments while idle, and a last `reconnect`/`error` event when the
stream ends early. The hub is created in the app's lifespan and closed with it.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import aclosing

from temporalio.client import Client, WorkflowQueryFailedError
from temporalio.service import RPCError

from core.artifacts import ArtifactStore

from .events import END, KEEPALIVE, RETRY, chunk_event, control_event
from .feed import Feed
from .source import StreamSource
from .subscriber import STOPPING, Event, Final, Subscriber

REPLAY_EVENTS = 256
"""Recent events a feed keeps for clients that join or reconnect."""
KEEPALIVE_SECONDS = 15.0
"""Idle time after which a stream gets a keep-alive comment."""
CHECK_SECONDS = 2.0
"""How long `complete` may take to tell whether a closed workflow's stream has more for a client."""


async def sse_text(
    items: AsyncGenerator[Event | Final | None], after: int, workflow_id: str
) -> AsyncIterator[str]:
    """A stream's events as SSE text: keep-alives while idle, and a last `reconnect`/`error`
    event (with where to resume) when it ends early, or `end` when `workflow_id` closed (a client
    stops following). Closes `items` when done."""
    yield RETRY
    last = after
    async with aclosing(items):
        async for item in items:
            if item is None:
                yield KEEPALIVE
            elif isinstance(item, Final):
                detail = item.detail or f"{workflow_id} has ended; its stream is complete"
                yield control_event(END if item.kind == "end" else item.kind, detail, last)
                return
            else:
                yield item.text
                last = item.offset


class StreamHub:
    """Feeds by workflow id, shared by every client of this process."""

    def __init__(
        self,
        client: Client,
        *,
        client_buffer: int,
        store: ArtifactStore | None = None,
        replay: int = REPLAY_EVENTS,
        keepalive_seconds: float = KEEPALIVE_SECONDS,
    ) -> None:
        self._client = client
        self._store = store
        self._client_buffer = client_buffer
        self._replay = replay
        self._keepalive = keepalive_seconds
        self._feeds: dict[str, Feed] = {}
        self._closed = False

    def clients(self, workflow_id: str) -> int:
        """SSE clients of this process following `workflow_id` now."""
        feed = self._feeds.get(workflow_id)
        return feed.clients if feed else 0

    def feeds(self) -> int:
        """Workflows this process follows now (lingering feeds included)."""
        return len(self._feeds)

    def events(self, workflow_id: str, after: int) -> AsyncIterator[str]:
        """SSE text for every chunk with sequence id > `after`, until the stream ends."""
        return sse_text(self.follow(workflow_id, after), after, workflow_id)

    async def follow(self, workflow_id: str, after: int) -> AsyncGenerator[Event | Final | None]:
        """Every chunk with sequence id > `after` in order, then how the stream ended (`Final`);
        None (a keep-alive) after `keepalive_seconds` in which nothing was queued for the client.
        Close it (`aclosing`) when done early. Once the hub is closed (the API stopping), a new
        follower is told to reconnect at once."""
        if self._closed:
            yield Final("reconnect", STOPPING)
            return
        feed = self._feed(workflow_id, after + 1)
        subscriber = Subscriber(after + 1, self._client_buffer, self._keepalive)
        last = after
        try:
            backlog = feed.attach(subscriber)
            first_held = backlog[0].offset if backlog else feed.next_offset
            if last + 1 < first_held:
                try:
                    async for chunk in feed.source.read(last + 1, until=first_held):
                        yield Event(chunk.sequence_id, chunk_event(chunk), chunk)
                        last = chunk.sequence_id
                except Exception as err:  # no stream without Temporal: say so, with where to resume
                    yield Final("error", f"reading the stream of {workflow_id} from Temporal failed: {err}")
                    return
            for event in backlog:
                if event.offset > last:
                    yield event
                    last = event.offset
            while True:
                item = await subscriber.next()
                if item is None or isinstance(item, Final):
                    yield item
                    if item is not None:
                        return
                elif item.offset > last:
                    yield item
                    last = item.offset
        finally:
            feed.detach(subscriber)
            subscriber.close()

    async def complete(self, workflow_id: str, after: int) -> bool:
        """Whether a client that has every chunk up to `after` has the whole stream: the workflow
        has closed and nothing follows. False when that is not known within `CHECK_SECONDS` (or
        Temporal could not say): the stream is then sent as usual, and ends with `end`."""
        source = StreamSource(self._client, workflow_id, self._store)
        try:
            async with asyncio.timeout(CHECK_SECONDS):
                if await source.running():
                    return False
                async for _ in source.read(after + 1):
                    return False
                return True
        except (TimeoutError, RPCError, WorkflowQueryFailedError):
            return False

    def _feed(self, workflow_id: str, start: int) -> Feed:
        feed = self._feeds.get(workflow_id)
        if feed is None or feed.ended:
            source = StreamSource(self._client, workflow_id, self._store)
            feed = Feed(source, start, replay=self._replay, on_end=self._forget)
            self._feeds[workflow_id] = feed
        return feed

    def _forget(self, feed: Feed) -> None:
        if self._feeds.get(feed.source.workflow_id) is feed:
            del self._feeds[feed.source.workflow_id]

    async def close(self) -> None:
        """Stop every feed (clients are told to reconnect), and start none again."""
        self._closed = True
        for feed in list(self._feeds.values()):
            await feed.close()
