"""Quick agent steps: an agent that decides in the worker (the offline demo rules) steps as a local
activity, except right after a request to a person, whose answer must not wait for the agent."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.api.history.v1 import HistoryEvent
from temporalio.client import Client

from api.calls import sessions as session_calls
from contracts import AgentSpec, AgentStepInput, InboundMessage, InteractionResponse, SessionConfig
from core.agent_registry import BUILTIN_AGENTS
from core.settings import Settings
from tests.conftest import assert_eventually
from workflows.agent.loop import quick_step
from workflows.identity.ids import session_workflow_id
from workflows.session import SessionWorkflow

DELETE_CANCELLED = "DELETE FROM orders WHERE status = 'cancelled'"


def _step(agent: AgentSpec | None, agent_id: str = "Agent:demo", **input_data: Any) -> AgentStepInput:
    return AgentStepInput(
        agent_id=agent_id, owner_id="session:x", messages=[], input_data=input_data or None, agent=agent
    )


@pytest.mark.parametrize(
    ("step", "quick"),
    [
        (_step(AgentSpec(name="demo", framework="demo")), True),
        (_step(AgentSpec(name="demo", framework="demo"), sleep_seconds=0), True),
        (_step(AgentSpec(name="demo", framework="demo"), sleep_seconds=2), False),
        (_step(AgentSpec(name="demo", framework="demo"), echo="x"), True),
        (_step(AgentSpec(name="gem", framework="adk", model="gemini-2.5-flash")), False),
        (_step(AgentSpec(name="lg", framework="langgraph", model="demo")), False),
        (_step(AgentSpec(name="ag", framework="autogen", model="demo")), False),
        (_step(None), True),  # a step without a declaration: the builtin of its name
        (_step(None, sleep_seconds=1), False),
        (_step(None, "Agent:demo-adk"), False),
        (_step(None, "Agent:nope"), False),
    ],
    ids=[
        "demo",
        "demo-sleep-0",
        "demo-sleeps",
        "demo-echo",
        "adk",
        "langgraph",
        "autogen",
        "builtin-demo",
        "builtin-demo-sleeps",
        "builtin-adk",
        "unknown",
    ],
)
def test_only_agents_that_decide_in_the_worker_without_waiting_step_quickly(
    step: AgentStepInput, quick: bool
) -> None:
    assert quick_step(step) is quick


def _scheduled(event: HistoryEvent) -> str | None:
    if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
        return event.activity_task_scheduled_event_attributes.activity_type.name
    return None


def _summary(event: HistoryEvent) -> str:
    return event.user_metadata.summary.data.decode() if event.user_metadata.HasField("summary") else ""


async def test_a_demo_turn_steps_locally_until_a_person_decides_and_the_approver_is_answered_first(
    client: Client, settings: Settings, worker: None
) -> None:
    key = f"quick-{uuid.uuid4().hex[:8]}"
    config = SessionConfig(session_key=key, agent=BUILTIN_AGENTS["demo"])
    handle = client.get_workflow_handle(session_workflow_id(key))
    await session_calls.send_message(
        client,
        settings.temporal.task_queue,
        config,
        InboundMessage(content=DELETE_CANCELLED, sender_id="alice"),
    )
    pending = await assert_eventually(
        lambda: handle.query(SessionWorkflow.get_pending), bool, what="the DELETE waiting for approval"
    )
    before = (await handle.fetch_history()).events
    assert [name for e in before if (name := _scheduled(e))] == [], "the first step ran as a local activity"
    assert any(
        '"agent Agent:demo"' in _summary(e) for e in before if e.HasField("marker_recorded_event_attributes")
    )

    outcome = await handle.execute_update(
        SessionWorkflow.respond_checked,
        InteractionResponse(interaction_id=pending[0].interaction_id, approved=True, principal="alice"),
    )
    assert outcome.approved and (outcome.tool_result or {}).get("ok"), outcome
    status = await assert_eventually(
        lambda: handle.query(SessionWorkflow.get_status),
        lambda s: s.messages[-1].role == "assistant",
        what="the agent's answer",
    )
    assert "3" in str(status.messages[-1].content), "the answer reads the tool's result (3 rows)"
    events = (await handle.fetch_history()).events
    answered = next(
        e.event_id for e in events if e.event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED
    )
    step_after = [e.event_id for e in events if _scheduled(e) == "agent_step"]
    assert len(step_after) == 1, "only the step after the decision is an activity"
    assert answered < step_after[0], "the approver was answered before the agent's next step ran"
