"""A session of 260 turns stays small: bounded state and query answers, archived history still
readable page by page, SSE from the very first offset, and every run replays."""

from __future__ import annotations

import json
import uuid

import httpx
import pytest
from temporalio.client import Client, WorkflowHistory

from contracts import InboundMessage, LiveSession, MessagesQuery, SessionConfig, TaskChunkType, TurnStarted
from workflows.session import SessionWorkflow
from workflows.session.bounds import MESSAGES_KEPT
from workflows.session.state import SessionRunInput

from ...conftest import assert_progressing
from ...support import collect_events, event_of, replayer

TURNS = 260
"""Five times the conversation the state keeps (`MESSAGES_KEPT`: 100 messages), over three runs
(`CONTINUE_AFTER`), the second continue-as-new archiving stream chunks (past `STREAM_KEPT`): every
bound a longer session meets. 1,000 turns behave the same and took over three minutes of a loaded
CI run; 400 took half a minute of the test process's CPU alone."""
CONTINUE_AFTER = 120
STATUS_BYTES_BOUND = 64 * 1024
"""A LiveSession answer stays under this however long the session ran."""


@pytest.mark.slow(seconds=100)
async def test_hundreds_of_turns_keep_state_small_and_everything_readable(
    client: Client, settings: object, http: httpx.AsyncClient, task_queue: str
) -> None:
    key = f"long-{uuid.uuid4().hex[:8]}"
    handle = await client.start_workflow(
        SessionWorkflow.run,
        SessionRunInput(config=SessionConfig(session_key=key), turns_before_continue_as_new=CONTINUE_AFTER),
        id=f"session:{key}",
        task_queue=task_queue,
    )
    for turn in range(TURNS):
        await handle.signal(SessionWorkflow.submit_message, InboundMessage(content=f"hello number {turn}"))

    async def status() -> LiveSession:
        result: LiveSession = await handle.query(SessionWorkflow.get_status)
        return result

    done = await assert_progressing(
        status, lambda s: s.metadata["messages_total"], 2 * TURNS, what=f"{TURNS} answered turns"
    )
    assert done.metadata["messages_total"] == 2 * TURNS, "each turn answered once"
    assert len(done.model_dump_json()) < STATUS_BYTES_BOUND
    window = await handle.query(SessionWorkflow.get_messages, MessagesQuery(limit=500))
    assert window.total == 2 * TURNS and len(window.messages) <= MESSAGES_KEPT.max_items

    first = (await http.get(f"/sessions/{key}/messages", params={"before": 4, "limit": 4})).json()
    assert [m["content"] for m in first["messages"] if m["role"] == "user"] == [
        "hello number 0",
        "hello number 1",
    ]
    assert first["start"] == 0 and first["next_before"] is None
    middle = (await http.get(f"/sessions/{key}/messages", params={"before": TURNS + 1, "limit": 3})).json()
    assert next(m["content"] for m in middle["messages"]) == f"hello number {TURNS // 2 - 1}"
    assert middle["next_before"] == TURNS - 2
    latest = (await http.get(f"/sessions/{key}/messages", params={"limit": 2})).json()
    assert latest["messages"][0]["content"] == f"hello number {TURNS - 1}"

    chunks = await collect_events(http, key, lambda c: c.sequence_id >= 5, params={"after": "1"})
    assert [c.sequence_id for c in chunks] == [2, 3, 4, 5], "the first chunks come back from the archive"
    assert chunks[2].chunk_type == TaskChunkType.PROCESSING
    assert event_of(chunks[2], TurnStarted).message == "hello number 1"

    runs = []
    async for execution in client.list_workflows(f"WorkflowId = 'session:{key}'"):
        runs.append(execution.run_id)
    assert len(runs) >= TURNS // CONTINUE_AFTER, "the session continued as new along the way"
    for run_id in runs:
        history: WorkflowHistory = await client.get_workflow_handle(
            f"session:{key}", run_id=run_id
        ).fetch_history()
        continued_with = [
            e.workflow_execution_continued_as_new_event_attributes.input
            for e in history.events
            if e.HasField("workflow_execution_continued_as_new_event_attributes")
        ]
        for payloads in continued_with:
            assert payloads.ByteSize() < 512 * 1024, "continue-as-new carries only what is needed"
        await replayer(client.data_converter).replay_workflow(history)
    assert json.loads(history.to_json())
