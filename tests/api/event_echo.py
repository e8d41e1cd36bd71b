"""A workflow that publishes the events it is given on its chunk stream, as a session would, and
answers `get_status` like one: what the API reads of any session, for the events' SSE test."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from pydantic import BaseModel

    from contracts import LiveSession, SessionStatus, StreamEvent

from workflows.stream.chunks import ChunkStream
from workflows.supervision.handlers import StreamHandlers


class EchoInput(BaseModel):
    """The session key, and the events to publish in order."""

    key: str
    events: list[StreamEvent]


@dataclass
class Numbering:
    next_sequence: int = 0


@workflow.defn(name="EventEcho")
class EventEcho(StreamHandlers):
    """Publishes `EchoInput.events`, then stays open until `stop`."""

    @workflow.init
    def __init__(self, input: EchoInput) -> None:
        self._chunks = ChunkStream(workflow.info().workflow_id, Numbering(), None)
        self._key = input.key
        self._stopped = False

    @workflow.run
    async def run(self, input: EchoInput) -> None:
        for event in input.events:
            self._chunks.publish(event)
        await workflow.wait_condition(lambda: self._stopped)
        self._chunks.close()

    @workflow.signal
    def stop(self) -> None:
        self._stopped = True

    @workflow.query
    def get_status(self) -> LiveSession:
        at = datetime(2026, 11, 27, tzinfo=UTC)
        return LiveSession(
            session_id=self._key,
            workflow_id=workflow.info().workflow_id,
            status=SessionStatus.ACTIVE,
            created_at=at,
            last_activity=at,
        )
