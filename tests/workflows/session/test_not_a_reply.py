"""A message that may not reply (`InboundMessage.may_reply=False`, as AG-UI sends every message:
its decisions come as a run's `resume`) is never read as the decision on what waits, even when it
reaches the session just as a request opens and says exactly what approves: it waits, as the next
turn, until the turn that asked is over."""

from __future__ import annotations

import uuid
from collections.abc import Callable

from temporalio.client import Client

from api.calls import sessions as session_calls
from contracts import InboundMessage, Role, SessionConfig, TaskChunkType, TurnStarted
from core.settings import Settings
from tests.support import events
from worker import build_worker
from workflows.identity.ids import session_workflow_id
from workflows.session import SessionWorkflow

from ...decisions import decided
from .test_durability import message, read_stream, wait_for_pending


def ok_from_an_admin(*, may_reply: bool) -> InboundMessage:
    return InboundMessage(
        content="ok",
        sender_id="carol",
        role=Role.admin,
        channel="ag-ui",
        message_id=f"m-{uuid.uuid4().hex[:8]}",
        may_reply=may_reply,
    )


async def test_a_message_that_may_not_reply_waits_as_the_next_turn(
    client: Client, settings: Settings, count_orders: Callable[[str], int]
) -> None:
    key = f"not-a-reply-{uuid.uuid4().hex[:8]}"
    handle = client.get_workflow_handle(session_workflow_id(key))
    async with build_worker(client, settings):
        await session_calls.send_message(
            client,
            settings.temporal.task_queue,
            SessionConfig(session_key=key),
            message("DELETE FROM orders WHERE id = 4"),
        )
        pending = await wait_for_pending(client, key)
        await handle.signal(SessionWorkflow.submit_message, ok_from_an_admin(may_reply=False))

        still = await handle.query(SessionWorkflow.get_status)  # after the signal's workflow task
        assert [p.interaction_id for p in still.pending_interactions] == [
            pending.pending_interactions[0].interaction_id
        ], "'ok' from an admin did not decide the request"
        assert count_orders("id = 4") == 1
        audit = await handle.query(SessionWorkflow.get_audit)
        assert not [e for e in audit.entries if e.channel == "ag-ui"], audit.entries

        await handle.execute_update(
            SessionWorkflow.decide_checked,
            decided(interaction_id=pending.pending_interactions[0].interaction_id, principal="bob"),
        )
        chunks = await read_stream(
            client, key, lambda c: any(e.message == "ok" for e in events([c], TurnStarted))
        )
    assert count_orders("id = 4") == 0, "bob's approval ran the DELETE"
    turns = [(e.message, e.sender) for e in events(chunks, TurnStarted)]
    assert turns == [("DELETE FROM orders WHERE id = 4", "alice"), ("ok", "carol")], turns
    completed = [i for i, c in enumerate(chunks) if c.chunk_type == TaskChunkType.COMPLETE]
    assert completed and completed[0] < len(chunks) - 1, "the first turn was over before 'ok' began"
