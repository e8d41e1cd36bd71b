"""Sessions survive worker restarts, time out durably, and continue-as-new without loss."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import timedelta

import pytest
from temporalio.client import Client, WorkflowExecutionStatus
from temporalio.contrib.workflow_streams import WorkflowStreamClient
from temporalio.testing import WorkflowEnvironment

from api.calls import sessions as session_calls
from api.main import create_app
from contracts import (
    InboundMessage,
    LiveSession,
    SessionConfig,
    SessionControl,
    TaskChunkType,
    TaskStreamChunk,
    TurnAnswered,
)
from core.agent_registry import BUILTIN_AGENTS
from core.settings import Settings
from tests.conftest import assert_eventually
from tests.support import asked, events, generation_in, serve, versions_written
from worker import build_worker
from workflows.identity.ids import session_workflow_id
from workflows.session import STREAM_TOPIC, SessionWorkflow
from workflows.session.state import SessionRunInput
from workflows.versioning import AT_START, GENERATION

from ...decisions import decided

DELETE_CANCELLED = "DELETE FROM orders WHERE status = 'cancelled'"


def message(text: str, sender: str = "alice") -> InboundMessage:
    return InboundMessage(content=text, sender_id=sender, chat_id="test")


async def wait_for_pending(client: Client, key: str) -> LiveSession:
    handle = client.get_workflow_handle(session_workflow_id(key))
    return await assert_eventually(
        lambda: handle.query(SessionWorkflow.get_status),
        lambda s: bool(s.pending_interactions),
        what="a pending approval",
    )


async def read_stream(
    client: Client, key: str, until: Callable[[TaskStreamChunk], bool]
) -> list[TaskStreamChunk]:
    stream = WorkflowStreamClient.create(client, session_workflow_id(key))
    chunks: list[TaskStreamChunk] = []
    async for item in stream.subscribe(
        [STREAM_TOPIC], result_type=TaskStreamChunk, poll_cooldown=timedelta(milliseconds=20)
    ):
        chunks.append(item.data)
        if until(item.data):
            return chunks
    return chunks


async def test_a_worker_restart_while_waiting_loses_nothing(
    client: Client, settings: Settings, count_orders: Callable[[str], int]
) -> None:
    key = f"restart-{uuid.uuid4().hex[:8]}"
    async with build_worker(client, settings):
        await session_calls.send_message(
            client, settings.temporal.task_queue, SessionConfig(session_key=key), message(DELETE_CANCELLED)
        )
        pending = await wait_for_pending(client, key)
    interaction_id = pending.pending_interactions[0].interaction_id
    async with build_worker(client, settings):
        handle = client.get_workflow_handle(session_workflow_id(key))
        still = await handle.query(SessionWorkflow.get_status)
        assert [p.interaction_id for p in still.pending_interactions] == [interaction_id]
        outcome = await handle.execute_update(
            SessionWorkflow.decide_checked,
            decided(interaction_id=interaction_id, approved=True, principal="bob"),
        )
        assert outcome.tool_result is not None and outcome.tool_result.content["rowcount"] == 3
        chunks = await read_stream(client, key, lambda c: c.chunk_type == TaskChunkType.COMPLETE)
        answers = [event.answer for event in events(chunks, TurnAnswered)]
        assert answers == ["DELETE done: 3 rows affected."], "one answer, after the restart"
    assert count_orders("status = 'cancelled'") == 0


async def test_a_grant_survives_a_worker_restart(
    client: Client, settings: Settings, count_orders: Callable[[str], int]
) -> None:
    key = f"grant-{uuid.uuid4().hex[:8]}"
    handle = client.get_workflow_handle(session_workflow_id(key))
    async with build_worker(client, settings):
        await session_calls.send_message(
            client,
            settings.temporal.task_queue,
            SessionConfig(session_key=key),
            message("DELETE FROM orders WHERE id = 1"),
        )
        pending = await wait_for_pending(client, key)
        await handle.execute_update(
            SessionWorkflow.decide_checked,
            decided(
                interaction_id=pending.pending_interactions[0].interaction_id,
                approved=True,
                principal="bob",
                response_data={"grant": "session_prefix"},
            ),
        )
        await read_stream(client, key, lambda c: c.chunk_type == TaskChunkType.COMPLETE)
    async with build_worker(client, settings):  # a new worker replays the session from its history
        await handle.signal(SessionWorkflow.submit_message, message("DELETE FROM orders WHERE id = 2"))
        await assert_eventually(
            lambda: handle.query(SessionWorkflow.get_grants),
            lambda grants: grants[0].uses == 1,
            what="the second DELETE allowed by the grant",
        )
        status = await handle.query(SessionWorkflow.get_status)
        assert status.pending_interactions == [], "nobody was asked"
    assert count_orders("id IN (1, 2)") == 0


@pytest.mark.parametrize("agent", ["demo", "demo-adk", "demo-langgraph", "demo-autogen"])
async def test_an_unanswered_approval_is_denied_by_the_timeout(
    time_env: WorkflowEnvironment, settings: Settings, agent: str
) -> None:
    client = time_env.client
    key = f"timeout-{uuid.uuid4().hex[:8]}"
    config = SessionConfig(
        session_key=key, approval_timeout_seconds=300, agent_id=f"Agent:{agent}", agent=BUILTIN_AGENTS[agent]
    )
    async with build_worker(client, settings):
        await session_calls.send_message(
            client, settings.temporal.task_queue, config, message(DELETE_CANCELLED)
        )
        pending = await wait_for_pending(client, key)
        expires_at = pending.pending_interactions[0].expires_at
        assert expires_at is not None
        assert (expires_at - pending.pending_interactions[0].timestamp) == timedelta(seconds=300)
        await time_env.sleep(301)
        handle = client.get_workflow_handle(session_workflow_id(key))
        audit = await assert_eventually(
            lambda: handle.query(SessionWorkflow.get_audit),
            lambda trail: trail.entries[-1].kind == "denied",
            what="the timeout denial",
        )
        denial = audit.entries[-1]
        assert (denial.principal, denial.channel) == ("system:timeout", "system")
        told = (
            "I did not run sql: denied by system:timeout (the approval request timed out) — "
            '"no decision within 0:05:00".'
        )
        status = await assert_eventually(
            lambda: handle.query(SessionWorkflow.get_status),
            lambda s: s.messages[-1].content == told,
            what="the agent's report of the timeout",
        )
        assert status.status == "active" and status.pending_interactions == []


async def test_continue_as_new_carries_conversation_stream_and_ids(
    client: Client, settings: Settings
) -> None:
    key = f"can-{uuid.uuid4().hex[:8]}"
    workflow_id = session_workflow_id(key)
    async with build_worker(client, settings):
        first = await client.start_workflow(
            SessionWorkflow.run,
            SessionRunInput(config=SessionConfig(session_key=key), turns_before_continue_as_new=1),
            id=workflow_id,
            task_queue=settings.temporal.task_queue,
            start_signal="submit_message",
            start_signal_args=[message(DELETE_CANCELLED)],
        )
        pending = await wait_for_pending(client, key)
        await first.execute_update(
            SessionWorkflow.decide_checked,
            decided(interaction_id=pending.pending_interactions[0].interaction_id, approved=False),
        )
        first_run = client.get_workflow_handle(workflow_id, run_id=first.first_execution_run_id)
        await assert_eventually(
            lambda: first_run.describe(),
            lambda d: d.status == WorkflowExecutionStatus.CONTINUED_AS_NEW,
            what="continue-as-new",
        )
        latest = client.get_workflow_handle(workflow_id)
        await latest.signal(SessionWorkflow.submit_message, message(DELETE_CANCELLED))
        second = await assert_eventually(
            lambda: latest.query(SessionWorkflow.get_status),
            lambda s: bool(s.pending_interactions),
            what="the second approval request",
        )
        assert second.pending_interactions[0].interaction_id == "tool_2", "ids must not restart"
        assert [m.role for m in second.messages][:4] == ["user", "assistant", "tool", "assistant"]
        description = await latest.describe()
        assert description.run_id != first.first_execution_run_id
        chunks = await read_stream(
            client,
            key,
            lambda c: (
                c.chunk_type == TaskChunkType.TOOL_APPROVAL_REQUEST and asked(c).interaction_id == "tool_2"
            ),
        )
        assert [c.sequence_id for c in chunks] == list(range(len(chunks))), (
            "the stream continues without gaps"
        )
        await latest.signal(SessionWorkflow.cancel, SessionControl(reason="done"))
    before, after = await first_run.fetch_history(), await latest.fetch_history()
    markers = len(AT_START)  # one per change made since 1.0
    assert (generation_in(before), versions_written(before)) == (None, (markers, markers)), (
        "a run its client started"
    )
    assert (generation_in(after), versions_written(after)) == (GENERATION, (0, 0)), (
        "continued at the current generation, no marker"
    )


async def test_an_approval_sent_while_no_worker_runs_is_applied_when_one_returns(
    client: Client, settings: Settings, count_orders: Callable[[str], int]
) -> None:
    key = f"noworker-{uuid.uuid4().hex[:8]}"
    impatient = settings.model_copy(
        update={
            "api": settings.api.model_copy(update={"decision_wait_seconds": 1.0, "query_wait_seconds": 0.5})
        }
    )
    async with build_worker(client, settings):
        await session_calls.send_message(
            client, settings.temporal.task_queue, SessionConfig(session_key=key), message(DELETE_CANCELLED)
        )
        pending = await wait_for_pending(client, key)
    interaction_id = pending.pending_interactions[0].interaction_id
    async with serve(create_app(impatient, client=client)) as http:
        response = await http.post(f"/sessions/{key}/interactions/{interaction_id}", json={"approved": True})
        assert response.status_code == 202, response.text
        assert "no worker has processed it yet" in response.json()["detail"]
        assert count_orders("status = 'cancelled'") == 3
        for read in (f"/sessions/{key}", f"/sessions/{key}/audit", f"/sessions/{key}/events"):
            unanswered = await http.get(read)
            assert unanswered.status_code == 503, (read, unanswered.text)
            detail = unanswered.json()["detail"]
            assert detail.startswith(f"session {key!r} did not answer within 0.5 s: "), detail
            assert "no worker has asked that queue for work since" in detail, detail  # a task waits
            assert detail.endswith("(is `synapse worker` running on its task queue?)"), detail
            assert unanswered.headers["retry-after"] == "2"
        async with build_worker(client, settings):
            handle = client.get_workflow_handle(session_workflow_id(key))
            await assert_eventually(
                lambda: handle.query(SessionWorkflow.get_status),
                lambda s: s.messages[-1].content == "DELETE done: 3 rows affected.",
                what="the approval applied by the returning worker, and the agent's report",
            )
    assert count_orders("status = 'cancelled'") == 0
