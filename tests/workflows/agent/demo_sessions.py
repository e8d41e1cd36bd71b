"""Sessions of the demo agent for the agent tests: started by their first message, read by history."""

from __future__ import annotations

import uuid
from typing import Any

from temporalio.api.history.v1 import HistoryEvent
from temporalio.client import Client, WorkflowHandle

from api.calls import sessions as session_calls
from contracts import InboundMessage, SessionConfig
from core.agent_registry import BUILTIN_AGENTS
from core.settings import Settings
from workflows.identity.ids import session_workflow_id


def demo_session(
    client: Client, prefix: str, **fields: Any
) -> tuple[SessionConfig, WorkflowHandle[Any, Any]]:
    """The config of a new session of the demo agent (or as `fields` say) and its handle."""
    key = f"{prefix}-{uuid.uuid4().hex[:8]}"
    config = SessionConfig(session_key=key, **({"agent": BUILTIN_AGENTS["demo"]} | fields))
    return config, client.get_workflow_handle(session_workflow_id(key))


async def send(
    client: Client, settings: Settings, config: SessionConfig, text: str, sender: str = "alice"
) -> None:
    """A person's message, as the API sends it (signal-with-start)."""
    await session_calls.send_message(
        client, settings.temporal.task_queue, config, InboundMessage(content=text, sender_id=sender)
    )


def summary(event: HistoryEvent) -> str:
    """The event's summary in the Web UI (a local activity's marker: `"agent Agent:demo"`)."""
    return event.user_metadata.summary.data.decode() if event.user_metadata.HasField("summary") else ""
