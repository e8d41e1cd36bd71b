"""Escalation on the time-skipping server: an undecided request also asks a second list, then
the timeout denies it."""

from __future__ import annotations

import uuid
from collections.abc import Callable

from temporalio.client import WorkflowHandle
from temporalio.testing import WorkflowEnvironment

from api.calls import sessions as session_calls
from contracts import DecisionPolicy, LiveSession, SessionConfig, SessionControl
from core.settings import Settings
from tests.conftest import assert_eventually
from worker import build_worker
from workflows.identity.ids import session_workflow_id
from workflows.session import SessionWorkflow

from ...decisions import decided
from .test_durability import DELETE_CANCELLED, message, wait_for_pending


async def test_an_undecided_request_escalates_and_the_escalated_may_decide(
    time_env: WorkflowEnvironment, settings: Settings, count_orders: Callable[[str], int]
) -> None:
    client = time_env.client
    key = f"escalate-{uuid.uuid4().hex[:8]}"
    policy = DecisionPolicy(approvers=["carol"], escalate_to=["dave"])
    config = SessionConfig(session_key=key, approval_timeout_seconds=600, policies={"sql": policy})
    async with build_worker(client, settings):
        await session_calls.send_message(
            client, settings.temporal.task_queue, config, message(DELETE_CANCELLED)
        )
        pending = (await wait_for_pending(client, key)).pending_interactions[0]
        assert pending.approvers == ["carol"] and pending.escalate_to == ["dave"]
        assert (
            pending.escalate_at is not None
            and (pending.escalate_at - pending.timestamp).total_seconds() == 300
        )
        handle = client.get_workflow_handle(session_workflow_id(key))
        await time_env.sleep(301)
        status = await assert_eventually(
            lambda: handle.query(SessionWorkflow.get_status),
            lambda s: bool(s.pending_interactions) and s.pending_interactions[0].escalated,
            what="the escalation",
        )
        assert status.pending_interactions[0].approvers == ["carol", "dave"]
        audit = await handle.query(SessionWorkflow.get_audit)
        assert audit.entries[-1].kind == "escalated" and "now also asking dave" in (
            audit.entries[-1].comment or ""
        )
        outcome = await handle.execute_update(
            SessionWorkflow.decide_checked,
            decided(interaction_id=pending.interaction_id, approved=True, principal="dave"),
        )
        assert outcome.approved and outcome.approvals == ["dave"]
        await _close(handle)
    assert count_orders("status = 'cancelled'") == 0


async def _close(handle: WorkflowHandle[SessionWorkflow, LiveSession]) -> None:
    """End the session with its worker still up: nothing is left to block the shared server's clock."""
    await assert_eventually(
        lambda: handle.query(SessionWorkflow.get_status),
        lambda s: s.status == "active" and s.messages[-1].role == "assistant",
        what="the agent's report",
    )
    await handle.execute_update(SessionWorkflow.cancel_checked, SessionControl(reason="test over"))


async def test_an_escalated_request_nobody_decides_is_denied_by_the_timeout(
    time_env: WorkflowEnvironment, settings: Settings
) -> None:
    client = time_env.client
    key = f"escalate-{uuid.uuid4().hex[:8]}"
    policy = DecisionPolicy(escalate_to=["dave"], escalate_after_seconds=60)
    config = SessionConfig(
        session_key=key, approvers=["carol"], approval_timeout_seconds=300, policies={"*": policy}
    )
    async with build_worker(client, settings):
        await session_calls.send_message(
            client, settings.temporal.task_queue, config, message(DELETE_CANCELLED)
        )
        await wait_for_pending(client, key)
        handle = client.get_workflow_handle(session_workflow_id(key))
        await time_env.sleep(301)
        audit = await assert_eventually(
            lambda: handle.query(SessionWorkflow.get_audit),
            lambda trail: trail.entries[-1].kind == "denied",
            what="the timeout denial",
        )
        kinds = [(e.kind, e.principal) for e in audit.entries]
        assert kinds == [
            ("requested", "alice"),
            ("escalated", "system:timeout"),
            ("denied", "system:timeout"),
        ]
