"""The SSE body of one AG-UI run: `RUN_STARTED`, what the run has to say first, then the mapped
events of the session's stream from the run's start, until the run ends. A run whose turn ended
well may go on with the turn of its new message (a `resume` with a message: `Then`), in the same run.

Encoded with the protocol's own `EventEncoder` (`data: <json>` and a blank line: a client splits on
`\\n\\n` only). While nothing happens a `: keepalive` comment goes out (clients ignore comments). A
stream that ends before the run did is a `RUN_ERROR` (`stream_ended`): a client that sees neither
`RUN_FINISHED` nor `RUN_ERROR` would take the cut run for a finished one.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from contextlib import aclosing
from dataclasses import dataclass
from datetime import timedelta

from ag_ui.core import (
    PROTOCOL_VERSION,
    BaseEvent,
    RunErrorEvent,
    RunFinishedCancelledOutcome,
    RunFinishedEvent,
    RunFinishedInterruptOutcome,
    RunStartedEvent,
)
from ag_ui.encoder import EventEncoder
from temporalio.client import Client
from temporalio.service import RPCError

from contracts import ApprovalCounted, DecisionTaken, LiveSession, TaskStreamChunk
from core.agent_registry import UnknownAssignee
from workflows.identity.ids import session_workflow_id

from ..calls import sessions
from ..calls.errors import CallError
from ..sse.events import KEEPALIVE
from ..sse.hub import StreamHub
from ..sse.subscriber import Final
from ..sse.turns import chunks_from, message_of
from .interrupts import interrupt_of
from .mapping import RunMapper


@dataclass(frozen=True)
class Follow:
    """Where the run's events are on the session's stream: after `after`, from the chunk that names
    `message_id` (its turn's start, or a decision the run's resume took), or that decides one of
    `decided` (a decision its graph took: the session shows it without the run's message id)."""

    after: int
    message_id: str
    decided: frozenset[str] = frozenset()
    left_out: bool = False
    """Requests the run's resume did not answer wait: the run ends with them once its decisions are
    shown (nothing that waits for them can end it)."""

    def starts(self, chunk: TaskStreamChunk) -> bool:
        """Whether the run's events begin with `chunk`."""
        event = chunk.content
        decides = isinstance(event, DecisionTaken | ApprovalCounted) and event.interaction_id in self.decided
        return decides or message_of(chunk) == self.message_id


Then = Callable[[], Awaitable[Follow | LiveSession]]
"""What a run does when its turn ended well: a new message's turn (where to follow it), or not (the
session: its requests end the run)."""


@dataclass(frozen=True)
class RunStream:
    """One run of an AG-UI thread (the session `agui:<threadId>`)."""

    client: Client
    hub: StreamHub
    key: str
    thread_id: str
    run_id: str
    wait: timedelta

    def finished(self, status: LiveSession | None) -> RunFinishedEvent:
        """The run's end by what waits in the session: its requests as interrupts, or a success."""
        pending = status.pending_interactions if status is not None else []
        if not pending:
            return RunFinishedEvent(thread_id=self.thread_id, run_id=self.run_id)
        interrupts = [interrupt_of(request) for request in pending]
        return RunFinishedEvent(
            thread_id=self.thread_id,
            run_id=self.run_id,
            outcome=RunFinishedInterruptOutcome(interrupts=interrupts),
        )

    async def body(
        self,
        before: list[BaseEvent],
        follow: Follow | None,
        mapper: RunMapper,
        status: LiveSession | None,
        then: Then | None = None,
    ) -> AsyncIterator[str]:
        """The run as SSE text: `before` after `RUN_STARTED`, then the stream from `follow` (None: the
        run ends at once, by what waits in `status`); when that turn ends, `then` (a new message's
        turn, or the session whose requests end the run)."""
        encoder = EventEncoder()
        yield encoder.encode(
            RunStartedEvent(thread_id=self.thread_id, run_id=self.run_id, protocol_version=PROTOCOL_VERSION)
        )
        for event in before:
            yield encoder.encode(event)
        if follow is None:
            yield encoder.encode(self.finished(status))
            return
        async for item in self._followed(follow, mapper, then):
            yield item if isinstance(item, str) else encoder.encode(item)

    async def _followed(
        self, follow: Follow, mapper: RunMapper, then: Then | None
    ) -> AsyncIterator[BaseEvent | str]:
        while True:
            after_turn: BaseEvent | Follow | None = None
            async with aclosing(self._turn(follow, mapper)) as turn:
                async for item in turn:
                    if isinstance(item, RunFinishedEvent) and item.outcome is None and then is not None:
                        after_turn = await self._then(then)
                        then = None
                        break
                    yield item
            if not isinstance(after_turn, Follow):
                if after_turn is not None:
                    yield after_turn
                return
            follow = after_turn

    async def _then(self, then: Then) -> BaseEvent | Follow:
        """What follows a turn that ended well: the next turn's place, or the run's end."""
        try:
            following = await then()
        except (CallError, UnknownAssignee, RPCError) as err:  # after RUN_STARTED: only a RUN_ERROR says so
            return RunErrorEvent(message=str(err), code="message_not_delivered")
        return following if isinstance(following, Follow) else self.finished(following)

    async def _turn(self, follow: Follow, mapper: RunMapper) -> AsyncGenerator[BaseEvent | str]:
        items = chunks_from(self.hub, session_workflow_id(self.key), follow.after, follow.starts)
        unshown = set(follow.decided)
        async with aclosing(items):
            async for item in items:
                if item is None:
                    yield KEEPALIVE
                    continue
                if isinstance(item, Final):
                    for event in mapper.closing():
                        yield event
                    if item.kind == "end":
                        yield RunFinishedEvent(thread_id=self.thread_id, run_id=self.run_id)
                    else:
                        detail = item.detail or "the session's stream ended before the run did"
                        yield RunErrorEvent(message=detail, code="stream_ended")
                    return
                events, ending = mapper.events(item.chunk)
                said = item.chunk.content
                if follow.left_out and isinstance(said, DecisionTaken) and said.interaction_id in unshown:
                    unshown.discard(said.interaction_id)
                    if not unshown and ending is None:
                        ending = "interrupt"
                if ending == "interrupt":
                    try:
                        status = await sessions.get_status(self.client, self.key, wait=self.wait)
                    except CallError as err:
                        yield RunErrorEvent(message=str(err), code="status_unavailable")
                        return
                    if not status.pending_interactions:  # decided already: the run goes on
                        ending = None
                for event in events:
                    yield event
                if ending is None:
                    continue
                if ending != "error":
                    for event in mapper.closing():
                        yield event
                if ending == "interrupt":
                    yield self.finished(status)
                elif ending == "success":
                    yield RunFinishedEvent(thread_id=self.thread_id, run_id=self.run_id)
                elif ending == "cancelled":
                    yield RunFinishedEvent(
                        thread_id=self.thread_id, run_id=self.run_id, outcome=RunFinishedCancelledOutcome()
                    )
                return
        for event in mapper.closing():
            yield event
        yield RunFinishedEvent(thread_id=self.thread_id, run_id=self.run_id)
