"""The API's stream hub without HTTP: several API processes, continue-as-new, catch-up, errors."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator
from datetime import timedelta

from temporalio import workflow
from temporalio.client import Client
from temporalio.worker import Worker

from api.calls import sessions
from api.sse import StreamHub
from api.sse.events import RETRY
from contracts import InboundMessage, SessionConfig, TaskChunkType, TaskStreamChunk
from core.client.sse import SseEvent, parse_sse
from core.settings import Settings
from worker import build_worker
from workflows.session import SessionWorkflow
from workflows.session.state import SessionRunInput
from workflows.stream.watch import MAX_WATCHERS

from ..conftest import assert_eventually
from ..decisions import decided
from ..support import chunk_of, updates_in_flight

DELETE_CANCELLED = "DELETE FROM orders WHERE status = 'cancelled'"


class Reader:
    """Consumes one `hub.events()` body in the background, parsing its SSE text."""

    def __init__(self, hub: StreamHub, workflow_id: str, after: int = -1) -> None:
        self.events: list[SseEvent] = []
        self.raw: list[str] = []
        self._task = asyncio.create_task(self._read(hub.events(workflow_id, after)))

    async def _read(self, body: AsyncIterator[str]) -> None:
        async def lines() -> AsyncIterator[str]:
            async for text in body:
                self.raw.append(text)
                for line in text.split("\n"):
                    yield line

        async for event in parse_sse(lines()):
            self.events.append(event)

    @property
    def chunks(self) -> list[TaskStreamChunk]:
        return [chunk_of(e) for e in self.events if e.id is not None]

    async def until(self, kind: TaskChunkType, count: int = 1) -> list[TaskStreamChunk]:
        async def probe() -> list[TaskStreamChunk]:
            if self._task.done():
                self._task.result()
            return self.chunks

        return await assert_eventually(
            probe, lambda chunks: sum(c.chunk_type == kind for c in chunks) >= count, what=f"{count} {kind}"
        )

    async def ended(self) -> list[SseEvent]:
        async with asyncio.timeout(30):
            await self._task
        return self.events

    async def close(self) -> None:
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task


def message(text: str) -> InboundMessage:
    return InboundMessage(content=text, sender_id="alice", chat_id="test")


async def test_five_api_processes_take_at_most_the_capped_slots_and_all_deliver(
    client: Client, settings: Settings
) -> None:
    async with build_worker(client, settings):
        key = f"hubs-{uuid.uuid4().hex[:8]}"
        handle = await sessions.send_message(
            client, settings.temporal.task_queue, SessionConfig(session_key=key), message(DELETE_CANCELLED)
        )
        hubs = [StreamHub(client, client_buffer=100) for _ in range(5)]  # as five API processes would
        readers = [Reader(hub, handle.id) for hub in hubs]
        for reader in readers:
            await reader.until(TaskChunkType.TOOL_APPROVAL_REQUEST)
        await assert_eventually(
            lambda: updates_in_flight(handle, "watch"), lambda n: n == MAX_WATCHERS, what="the cap reached"
        )
        pending = await handle.query(SessionWorkflow.get_pending)

        outcome = await handle.execute_update(
            SessionWorkflow.decide_checked,
            decided(interaction_id=pending[0].interaction_id, approved=True, principal="bob"),
        )

        assert outcome.tool_result is not None and outcome.tool_result.ok
        for reader in readers:  # the refused ones read with the poll query meanwhile
            chunks = await reader.until(TaskChunkType.COMPLETE)
            assert [c.sequence_id for c in chunks] == list(range(len(chunks)))
            assert chunks == readers[0].chunks[: len(chunks)]
        assert await updates_in_flight(handle, "watch") <= MAX_WATCHERS
        for reader, hub in zip(readers, hubs, strict=True):
            await reader.close()
            await hub.close()


async def test_a_feed_follows_continue_as_new_and_late_clients_catch_up(
    client: Client, settings: Settings
) -> None:
    async with build_worker(client, settings):
        key = f"hubcan-{uuid.uuid4().hex[:8]}"
        handle = await client.start_workflow(
            SessionWorkflow.run,
            SessionRunInput(config=SessionConfig(session_key=key), turns_before_continue_as_new=1),
            id=f"session:{key}",
            task_queue=settings.temporal.task_queue,
            start_signal="submit_message",
            start_signal_args=[message("one")],
        )
        hub = StreamHub(client, client_buffer=100, replay=2)
        early = Reader(hub, handle.id)
        await early.until(TaskChunkType.COMPLETE)
        for text in ("two", "three"):  # each turn ends with continue-as-new
            await client.get_workflow_handle(handle.id).signal(SessionWorkflow.submit_message, message(text))
            await early.until(TaskChunkType.COMPLETE, count=("one", "two", "three").index(text) + 1)
        latest = await client.get_workflow_handle(handle.id).describe()
        assert latest.run_id != handle.first_execution_run_id, "the session continued as new"
        assert early.raw[0] == RETRY, "a stream starts with the browser's reconnect delay"
        chunks = early.chunks
        assert [c.sequence_id for c in chunks] == list(range(len(chunks)))

        late = Reader(hub, handle.id)  # the feed holds 2 events; the rest is read with the query
        await late.until(TaskChunkType.COMPLETE, count=3)
        assert late.chunks == chunks
        for reader in (early, late):
            await reader.close()
        await hub.close()


@workflow.defn(sandboxed=False)
class Streamless:
    """A workflow without a chunk stream: reading it fails on the Temporal side."""

    @workflow.run
    async def run(self) -> None:
        await workflow.wait_condition(lambda: False, timeout=timedelta(minutes=5))


async def test_a_temporal_error_ends_the_stream_with_an_error_event(client: Client, task_queue: str) -> None:
    async with Worker(client, task_queue=task_queue, workflows=[Streamless]):
        handle = await client.start_workflow(
            Streamless.run, id=f"nostream-{uuid.uuid4().hex[:8]}", task_queue=task_queue
        )
        hub = StreamHub(client, client_buffer=10)
        events = await Reader(hub, handle.id, after=4).ended()
        assert len(events) == 1 and events[0].event == "error", events
        assert events[0].control["last_event_id"] == 4
        assert handle.id in events[0].control["detail"]
        assert hub.feeds() == 0
        await hub.close()
        await handle.terminate()
