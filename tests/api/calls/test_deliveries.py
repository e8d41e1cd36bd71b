"""`calls.sessions.deliver_once`, which every message to a session goes through (HTTP and chats): a new
session's first message is one call to Temporal, and a cancelled session is never started again."""

from __future__ import annotations

import uuid
from typing import Any

from temporalio.client import (
    Client,
    DescribeWorkflowInput,
    Interceptor,
    OutboundInterceptor,
    StartWorkflowInput,
    WorkflowHandle,
)

from api.calls import sessions
from contracts import InboundMessage, LiveSession, SessionControl
from core.agent_registry import DEFAULT_AGENT, load_registry
from core.settings import Settings
from tests.conftest import assert_eventually
from workflows.session import SessionWorkflow


class _Counted(OutboundInterceptor):
    def __init__(self, following: OutboundInterceptor, calls: list[str]) -> None:
        super().__init__(following)
        self.calls = calls

    async def start_workflow(self, input: StartWorkflowInput) -> WorkflowHandle[Any, Any]:
        self.calls.append("signal-with-start" if input.start_signal else "start")
        return await super().start_workflow(input)

    async def describe_workflow(self, input: DescribeWorkflowInput) -> Any:
        self.calls.append("describe")
        return await super().describe_workflow(input)


class CountingCalls(Interceptor):
    """Notes the starts and reads a client makes."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def intercept_client(self, next: OutboundInterceptor) -> OutboundInterceptor:
        return _Counted(next, self.calls)


def message(key: str, text: str) -> InboundMessage:
    return InboundMessage(
        channel="http", sender_id="ada", chat_id=key, content=text, message_id=f"m-{uuid.uuid4().hex}"
    )


async def said(client: Client, key: str) -> list[str]:
    """What the user has said in the session so far, once it shows."""
    handle = client.get_workflow_handle(f"session:{key}")

    async def status() -> LiveSession:
        found: LiveSession = await handle.query(SessionWorkflow.get_status)
        return found

    return [str(m.content) for m in (await status()).messages if m.role == "user"]


async def test_a_first_message_is_one_call_and_a_later_one_is_checked_after_it(
    client: Client, settings: Settings, worker: None
) -> None:
    counting = CountingCalls()
    config = client.config()
    config["interceptors"] = [*config["interceptors"], counting]
    counted = Client(**config)
    key = f"deliver-{uuid.uuid4().hex[:8]}"
    session = sessions.new_config(settings, key, load_registry(settings).resolve(DEFAULT_AGENT, key))
    queue = settings.temporal.task_queue

    first = await sessions.deliver_once(counted, queue, session, message(key, "hello"))

    assert first == sessions.Delivery()
    assert counting.calls == ["signal-with-start"]
    await assert_eventually(
        lambda: said(client, key), lambda texts: texts == ["hello"], what="the first message"
    )

    counting.calls.clear()
    second = await sessions.deliver_once(counted, queue, session, message(key, "again"))

    assert second == sessions.Delivery()
    assert counting.calls == ["signal-with-start", "describe"], "a running session is checked for a cancel"
    await assert_eventually(
        lambda: said(client, key), lambda texts: texts == ["hello", "again"], what="the second message"
    )


async def test_a_cancelled_session_is_not_started_again(
    client: Client, settings: Settings, worker: None
) -> None:
    key = f"deliver-{uuid.uuid4().hex[:8]}"
    session = sessions.new_config(settings, key, load_registry(settings).resolve(DEFAULT_AGENT, key))
    queue = settings.temporal.task_queue
    await sessions.deliver_once(client, queue, session, message(key, "hello"))
    await assert_eventually(lambda: said(client, key), lambda texts: texts == ["hello"], what="the message")
    await sessions.intervene(client, key, SessionWorkflow.cancel_checked, SessionControl(principal="ops"))
    await sessions.closed(client, key, within=30)
    handle = client.get_workflow_handle(f"session:{key}")
    run_id = (await handle.describe()).run_id

    refused = await sessions.deliver_once(client, queue, session, message(key, "are you there?"))

    assert refused.cancelled is not None and refused.cancelled.status == "cancelled"
    assert refused.previous is None
    assert (await handle.describe()).run_id == run_id, "the message started no new run"
