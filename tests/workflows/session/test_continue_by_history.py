"""A session continues as new at a turn's end once its run's history passes
`history_events_before_continue_as_new`, so a session evicted from a worker's cache replays its
last turns only; the next run keeps the conversation, the grants and the audit."""

from __future__ import annotations

import uuid
from collections.abc import Callable

from temporalio.api.enums.v1 import EventType
from temporalio.client import Client

from contracts import InboundMessage, LiveSession, MessagesQuery, SessionConfig
from workflows.session import SessionWorkflow
from workflows.session.state import SessionRunInput

from ...conftest import assert_eventually
from ...decisions import decided
from ...support import replayer

EVENTS = 10
"""Fewer than one approved turn leaves (23), so the first turn's end continues as new."""


def insert(order_id: int) -> InboundMessage:
    sql = f"INSERT INTO orders (id, customer, amount, status) VALUES ({order_id}, 'kim', 1.0, 'pending')"
    return InboundMessage(content=sql, sender_id="alice")


async def test_a_session_past_its_history_threshold_continues_as_new_at_a_turn_s_end_keeping_its_state(
    client: Client, worker: None, task_queue: str, count_orders: Callable[[str], int]
) -> None:
    key = f"cbh-{uuid.uuid4().hex[:8]}"
    handle = await client.start_workflow(
        SessionWorkflow.run,
        SessionRunInput(config=SessionConfig(session_key=key), history_events_before_continue_as_new=EVENTS),
        id=f"session:{key}",
        task_queue=task_queue,
    )
    first_run = handle.first_execution_run_id or (await handle.describe()).run_id
    await handle.signal(SessionWorkflow.submit_message, insert(900001))
    [pending] = await assert_eventually(
        lambda: handle.query(SessionWorkflow.get_pending), lambda p: len(p) == 1, what="the approval asked"
    )
    outcome = await handle.execute_update(
        SessionWorkflow.decide_checked,
        decided(interaction_id=pending.interaction_id, response_data={"grant": "session_prefix"}),
    )
    assert outcome.approved and outcome.tool_result is not None and outcome.tool_result.ok

    latest = client.get_workflow_handle(f"session:{key}")
    described = await assert_eventually(
        latest.describe, lambda d: d.run_id != first_run, what="a second run of the session"
    )
    history = await client.get_workflow_handle(f"session:{key}", run_id=first_run).fetch_history()
    kinds = [event.event_type for event in history.events]
    assert kinds[-1] == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW
    answered = max(i for i, kind in enumerate(kinds) if kind == EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED)
    assert kinds[answered + 1 : -1].count(EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED) == 1, (
        "it continued as new in the workflow task that ended the turn"
    )
    await replayer(client.data_converter).replay_workflow(history)

    grants = await latest.query(SessionWorkflow.get_grants)
    assert [(g.scope, g.head) for g in grants] == [("session_prefix", "INSERT orders")], "the grant is kept"
    await latest.signal(SessionWorkflow.submit_message, insert(900002))

    async def status() -> LiveSession:
        result: LiveSession = await latest.query(SessionWorkflow.get_status)
        return result

    await assert_eventually(
        status, lambda s: s.metadata["messages_total"] >= 6, what="the second turn answered"
    )
    assert count_orders("id IN (900001, 900002)") == 2, "the second INSERT ran under the grant, unasked"
    assert await latest.query(SessionWorkflow.get_pending) == []
    window = await latest.query(SessionWorkflow.get_messages, MessagesQuery(limit=20))
    users = [m.content for m in window.messages if m.role == "user"]
    assert users == [insert(900001).content, insert(900002).content], "the conversation is kept"
    audit = await latest.query(SessionWorkflow.get_audit)
    assert any(entry.interaction_id == pending.interaction_id for entry in audit.entries), "and the audit"
    assert described.run_id != first_run
