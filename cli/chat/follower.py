"""Following a session: its event stream in the background, shown as it comes, resumed after the
last chunk seen whenever the connection drops or the API restarts (however long that takes).

A request for a person goes to the approvals as it arrives, a decision closes it; a heartbeat
reads the session every few seconds so that the footer says whether the API answers.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

import httpx

from contracts import (
    DecisionTaken,
    QuestionAsked,
    RequestOpened,
    SessionCancelled,
    TaskChanged,
    TaskStreamChunk,
)
from core.client import SynapseClient, SynapseError

from .render import Renderer
from .state import ChatState, Request

HEARTBEAT_SECONDS = 3.0
RETRY_SECONDS = (0.5, 1, 2, 5)


class Follower:
    """Follows `state.key` from a given chunk on; `follow` starts (or restarts) it."""

    def __init__(
        self,
        client: SynapseClient,
        state: ChatState,
        renderer: Renderer,
        *,
        arrived: Callable[[Request], None],
        decided: Callable[[str, str], None],
    ) -> None:
        self.client, self.state, self.renderer = client, state, renderer
        self._arrived, self._decided = arrived, decided
        self.last: int | None = None
        """The sequence id of the last chunk seen."""
        self._tasks: list[asyncio.Task[None]] = []
        self._open = False
        """The event stream is open (the API answered it and it has not dropped since)."""

    def follow(self, after: int | None) -> None:
        """Follow the session's chunks after `after` (None: from its first)."""
        self.stop()
        self.last = after
        key = self.state.key
        self._tasks = [asyncio.ensure_future(self._stream(key)), asyncio.ensure_future(self._heartbeat(key))]

    def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        self._tasks = []

    async def close(self) -> None:
        tasks, self._tasks = self._tasks, []
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task

    def take(self, chunk: TaskStreamChunk) -> None:
        """One chunk of the stream: note what it changes, show it."""
        self.last = chunk.sequence_id
        event = chunk.content
        if isinstance(event, RequestOpened | QuestionAsked):
            request = Request.of_interaction(event.request)
            self.state.pending[request.interaction_id] = request
            self.state.activity = "waiting for you"
            self._arrived(request)
        elif isinstance(event, DecisionTaken):
            self.state.pending.pop(event.interaction_id, None)
            self._decided(event.interaction_id, f"{event.decided_by} ({event.channel})")
        elif isinstance(event, TaskChanged):
            settled = self.state.gate_settled(event)
            if settled is not None:
                self.state.pending.pop(settled.request.interaction_id, None)
                self._decided(settled.request.interaction_id, settled.by)
        self.renderer.chunk(chunk)
        if isinstance(event, SessionCancelled):
            self.state.pending.clear()

    async def _stream(self, key: str) -> None:
        failures = 0
        while True:
            opened = asyncio.Event()
            self._say("connecting")
            marker = asyncio.ensure_future(self._mark_open(opened))
            try:
                async for chunk in self.client.events(key, after=self.last, opened=opened):
                    failures = 0
                    self.take(chunk)
                self.state.connection = "session ended"
                return
            except SynapseError as err:
                if err.status == 404:
                    self.state.connection = "no such session"
                    return
            except httpx.HTTPError:
                pass
            finally:
                marker.cancel()
                self._open = False
            self._say("reconnecting")
            await asyncio.sleep(RETRY_SECONDS[min(failures, len(RETRY_SECONDS) - 1)])
            failures += 1

    async def _mark_open(self, opened: asyncio.Event) -> None:
        await opened.wait()
        self._open = True
        self.state.connection = "connected"

    def _say(self, connection: str) -> None:
        """The stream's state, unless the heartbeat found the API itself away (that says more)."""
        if not self.state.connection.startswith("API"):
            self.state.connection = connection

    async def _heartbeat(self, key: str) -> None:
        while True:
            await asyncio.sleep(HEARTBEAT_SECONDS)
            try:
                await self.client.session(key)
                await self._graph_requests()
            except SynapseError as err:
                if err.status >= 500:
                    self.state.connection = "API unavailable"
            except httpx.HTTPError:
                self.state.connection = self.unreachable()
            else:
                if self.state.connection.startswith("API"):
                    self.state.connection = "connected" if self._open else "reconnecting"

    def unreachable(self) -> str:
        """The footer's word for an API that does not answer, naming where it was looked for."""
        return f"API unreachable at {self.client.http.base_url}"

    def await_api(self) -> None:
        """The API did not answer at start: the footer says so until it does (then `idle`: no
        session is followed before the first message)."""
        self.stop()
        self.state.connection = self.unreachable()
        self._tasks = [asyncio.ensure_future(self._probe())]

    async def _probe(self) -> None:
        while True:
            await asyncio.sleep(HEARTBEAT_SECONDS)
            try:
                await self.client.me()
            except SynapseError:
                pass  # it answered
            except httpx.HTTPError:
                continue
            if self.state.connection.startswith("API"):
                self.state.connection = "idle"
            return

    async def _graph_requests(self) -> None:
        """Forget the tool approvals of the session's graphs that no longer wait (the session's
        stream does not say when one is decided). Not their gates: the stream relays each gated
        task's next status, which names who decided (`gate_settled`); read here first, the prompt
        would close saying only "someone else"."""
        known: dict[str, list[str]] = {}  # read before the graph is: what arrives meanwhile is newer
        for request in self.state.pending.values():
            if request.graph_id is not None and request.kind != "confirmation":
                known.setdefault(request.graph_id, []).append(request.interaction_id)
        for graph_id, asked in known.items():
            view = await self.client.graph(graph_id)
            waiting = {i.interaction_id for i in view.pending_interactions}
            for interaction_id in asked:
                if interaction_id not in waiting and interaction_id in self.state.pending:
                    del self.state.pending[interaction_id]
                    self._decided(interaction_id, "someone else")
