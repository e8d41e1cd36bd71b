"""The session's `watch` update: capped so decisions keep their update slots, released on close."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.api.history.v1 import HistoryEvent
from temporalio.client import Client, WorkflowHandle, WorkflowUpdateFailedError, WorkflowUpdateStage
from temporalio.exceptions import ApplicationError

from api.calls import sessions as session_calls
from contracts import (
    InboundMessage,
    SessionConfig,
    SessionControl,
    TaskChunkType,
    WatchRequest,
    WatchResult,
)
from core.settings import Settings
from worker import build_worker
from workflows.session import SessionWorkflow
from workflows.stream.watch import MAX_WATCHERS

from ..conftest import assert_eventually
from ..decisions import decided
from .agent.demo_sessions import summary

DELETE_CANCELLED = "DELETE FROM orders WHERE status = 'cancelled'"


async def waiting_session(client: Client, settings: Settings) -> WorkflowHandle[Any, Any]:
    """A session waiting for an approval; its stream has a few chunks."""
    key = f"watch-{uuid.uuid4().hex[:8]}"
    message = InboundMessage(content=DELETE_CANCELLED, sender_id="alice", chat_id="test")
    handle = await session_calls.send_message(
        client, settings.temporal.task_queue, SessionConfig(session_key=key), message
    )
    await assert_eventually(
        lambda: handle.query(SessionWorkflow.get_pending), bool, what="a pending approval"
    )
    return handle


async def start_watch(handle: WorkflowHandle[Any, Any], next_offset: int) -> asyncio.Task[WatchResult]:
    """A watch accepted by the workflow (in flight), waiting for its result."""
    update = await handle.start_update(
        SessionWorkflow.watch,
        WatchRequest(next_offset=next_offset),
        wait_for_stage=WorkflowUpdateStage.ACCEPTED,
    )
    return asyncio.ensure_future(update.result())


async def test_watchers_are_capped_and_a_decision_still_gets_through(
    client: Client, settings: Settings
) -> None:
    async with build_worker(client, settings):
        handle = await waiting_session(client, settings)
        status = await handle.query(SessionWorkflow.get_status)
        at_once = await handle.execute_update(SessionWorkflow.watch, WatchRequest(next_offset=0))
        assert [c.sequence_id for c in at_once.chunks] == list(range(at_once.next_offset))
        assert at_once.chunks[-1].chunk_type == TaskChunkType.TOOL_APPROVAL_REQUEST
        assert not at_once.closing

        waiting = [await start_watch(handle, at_once.next_offset) for _ in range(MAX_WATCHERS)]
        with pytest.raises(WorkflowUpdateFailedError) as refused:
            await handle.execute_update(SessionWorkflow.watch, WatchRequest(next_offset=at_once.next_offset))
        assert isinstance(refused.value.cause, ApplicationError)
        assert refused.value.cause.type == "TooManyWatchers"
        assert not any(task.done() for task in waiting)

        outcome = await handle.execute_update(
            SessionWorkflow.decide_checked,
            decided(
                interaction_id=status.pending_interactions[0].interaction_id, approved=True, principal="bob"
            ),
        )
        assert outcome.approved and outcome.tool_result is not None and outcome.tool_result.ok
        for task in waiting:
            result = await task
            assert result.chunks[0].sequence_id == at_once.next_offset
            assert result.chunks[0].chunk_type == TaskChunkType.PROGRESS  # the decision


async def test_watches_return_when_the_session_closes(client: Client, settings: Settings) -> None:
    async with build_worker(client, settings):
        handle = await waiting_session(client, settings)
        now = await handle.execute_update(SessionWorkflow.watch, WatchRequest(next_offset=0))
        waiting = await start_watch(handle, now.next_offset + 100)  # past anything it will publish
        await handle.execute_update(SessionWorkflow.cancel_checked, SessionControl(principal="bob"))
        result = await waiting
        assert result.closing
        assert result.chunks == [], "nothing past the requested offset"
        assert result.next_offset > now.next_offset  # the denial and the cancellation were published


async def test_a_watcher_sees_a_turn_start_before_its_quick_step_runs(
    client: Client, settings: Settings
) -> None:
    """A watched turn's quick first step runs as an activity: the workflow task ends as it is
    scheduled, so the watch carrying the turn's start is answered before the step's result exists
    (a local activity would hold the task, and the answer, until it is done). An unwatched turn's
    quick step stays a local activity (no task more)."""

    def step_results(events: list[HistoryEvent]) -> list[HistoryEvent]:
        return [
            e
            for e in events
            if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED
            or (e.event_type == EventType.EVENT_TYPE_MARKER_RECORDED and summary(e).startswith('"agent '))
        ]

    async with build_worker(client, settings):
        handle = await waiting_session(client, settings)  # its first turn, unwatched
        first_turn = [e async for e in handle.fetch_history_events()]
        assert [e.event_type for e in step_results(first_turn)] == [EventType.EVENT_TYPE_MARKER_RECORDED]
        status = await handle.query(SessionWorkflow.get_status)
        await handle.execute_update(
            SessionWorkflow.decide_checked,
            decided(interaction_id=status.pending_interactions[0].interaction_id),
        )
        answered = await assert_eventually(
            lambda: handle.query(SessionWorkflow.get_status),
            lambda s: s.messages[-1].role == "assistant",
            what="the first turn answered",
        )
        watching = await start_watch(handle, answered.next_offset)
        before = [e async for e in handle.fetch_history_events()][-1].event_id
        await handle.signal(
            SessionWorkflow.submit_message, InboundMessage(content="SELECT 1", sender_id="alice")
        )
        seen = await asyncio.wait_for(watching, 30)
        assert seen.chunks and seen.chunks[0].content.event == "turn_started", seen
        await assert_eventually(
            lambda: handle.query(SessionWorkflow.get_status),
            lambda s: len(s.messages) > len(answered.messages) + 1 and s.messages[-1].role == "assistant",
            what="the SELECT answered",
        )

    turn = [e async for e in handle.fetch_history_events() if e.event_id > before]
    watch_answered = next(
        e for e in turn if e.event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED
    )
    step = step_results(turn)[0]
    assert step.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED, "the watched step is an activity"
    assert watch_answered.event_id < step.event_id
    assert watch_answered.event_time.ToNanoseconds() < step.event_time.ToNanoseconds(), (
        "the watch was answered before the step's result, not with it"
    )
