"""The approval timeout is the server's timer: it fires with no worker running, and the denial follows."""

from __future__ import annotations

import asyncio
import uuid

from temporalio.api.enums.v1 import EventType
from temporalio.client import Client, WorkflowHandle

from api.calls import sessions as session_calls
from contracts import InboundMessage, LiveSession, SessionConfig
from core.settings import Settings
from worker import build_worker
from workflows.session import SessionWorkflow

from ..conftest import assert_eventually
from .conftest import DemoDb
from .flows import RECOVERY_WITHIN, answered, decisions

TEST_BOUND = 90.0
DELETE_CANCELLED = "DELETE FROM orders WHERE status = 'cancelled'"


async def event_types(handle: WorkflowHandle[SessionWorkflow, LiveSession]) -> list[EventType.ValueType]:
    """The workflow's history, as event types."""
    return [event.event_type async for event in handle.fetch_history_events()]


async def test_the_approval_timer_fires_while_no_worker_runs(
    client: Client, settings: Settings, demo_db: DemoDb
) -> None:
    key = f"timer-{uuid.uuid4().hex[:8]}"
    config = SessionConfig(session_key=key, approval_timeout_seconds=2)
    message = InboundMessage(content=DELETE_CANCELLED, sender_id="alice", chat_id="test")
    async with asyncio.timeout(TEST_BOUND):
        async with build_worker(client, settings):
            handle = await session_calls.send_message(client, settings.temporal.task_queue, config, message)
            pending = await assert_eventually(
                lambda: handle.query(SessionWorkflow.get_status),
                lambda s: s.status == "waiting_approval",
                what="the approval request",
            )
        interaction_id = pending.pending_interactions[0].interaction_id

        history = await assert_eventually(
            lambda: event_types(handle),
            lambda types: EventType.EVENT_TYPE_TIMER_FIRED in types,
            within=30,
            interval=0.2,
            what="the approval timer firing on the server",
        )
        fired = history.index(EventType.EVENT_TYPE_TIMER_FIRED)
        assert EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED not in history[fired:], "no worker may have run it"

        async with build_worker(client, settings):
            trail = await assert_eventually(
                lambda: handle.query(SessionWorkflow.get_audit),
                lambda t: bool(decisions(t, interaction_id)),
                within=RECOVERY_WITHIN,
                what="the timeout denial",
            )
            assert decisions(trail, interaction_id) == [("denied", "system:timeout", "system")]
            session = await assert_eventually(
                lambda: handle.query(SessionWorkflow.get_status), answered, what="the agent's report"
            )
    report = str(session.messages[-1].content)
    assert "denied by system:timeout" in report and "timed out" in report, report
    assert session.status == "active" and session.pending_interactions == []
    assert demo_db.count("status = 'cancelled'") == 3, "a timed-out request must change nothing"
