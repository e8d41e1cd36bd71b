"""Quick agent steps: an agent that decides in the worker (the offline demo rules) steps as a local
activity, except right after a request to a person, whose answer must not wait for the agent."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.api.history.v1 import HistoryEvent
from temporalio.client import Client
from temporalio.testing import ActivityEnvironment

from activities.agents.step import AgentActivities
from activities.tools.runner import ToolActivities
from contracts import (
    AgentIntent,
    AgentResult,
    AgentSpec,
    AgentStepInput,
    AssessRequest,
    RuleContext,
    StepAssessment,
    ToolAssessment,
    ToolCallRequest,
    UniversalMessage,
)
from core.settings import Settings
from tests.conftest import assert_eventually
from workflows.agent.gate import Assessed
from workflows.agent.loop import quick_step
from workflows.session import SessionWorkflow

from ...decisions import decided
from .demo_sessions import demo_session, send, summary

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


async def test_a_demo_turn_steps_locally_until_a_person_decides_and_the_approver_is_answered_first(
    client: Client, settings: Settings, worker: None
) -> None:
    config, handle = demo_session(client, "quick")
    await send(client, settings, config, DELETE_CANCELLED)
    pending = await assert_eventually(
        lambda: handle.query(SessionWorkflow.get_pending), bool, what="the DELETE waiting for approval"
    )
    before = (await handle.fetch_history()).events
    assert [name for e in before if (name := _scheduled(e))] == [], "the first step ran as a local activity"
    assert any(
        '"agent Agent:demo"' in summary(e) for e in before if e.HasField("marker_recorded_event_attributes")
    )

    outcome = await handle.execute_update(
        SessionWorkflow.decide_checked,
        decided(interaction_id=pending[0].interaction_id, approved=True, principal="alice"),
    )
    assert outcome.approved and outcome.tool_result is not None and outcome.tool_result.ok, outcome
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


def _markers(events: Sequence[HistoryEvent]) -> list[str]:
    return [summary(e) for e in events if e.event_type == EventType.EVENT_TYPE_MARKER_RECORDED]


async def test_a_quick_step_assesses_the_call_it_proposes_and_the_gate_still_asks(
    client: Client, settings: Settings, worker: None
) -> None:
    config, handle = demo_session(client, "assessed")
    await send(client, settings, config, "SELECT 1")
    await assert_eventually(
        lambda: handle.query(SessionWorkflow.get_status),
        lambda s: s.messages[-1].role == "assistant" and "tool_call" not in str(s.messages[-1].content),
        what="the SELECT answered",
    )
    freely = _markers((await handle.fetch_history()).events)
    assert not any("assess" in m for m in freely), f"the quick step assessed the SELECT: {freely}"
    assert await handle.query(SessionWorkflow.get_pending) == [], "a read-only call ran without asking"

    await send(client, settings, config, DELETE_CANCELLED)
    pending = await assert_eventually(
        lambda: handle.query(SessionWorkflow.get_pending), bool, what="the DELETE waiting for approval"
    )
    assert "DELETE" in str(pending[0].content), "asked for the DELETE, with the assessment's summary"
    asked = _markers((await handle.fetch_history()).events)
    assert not any("assess" in m for m in asked), f"the step's assessment stood for the gate's: {asked}"


async def test_the_step_assesses_as_the_gate_would_only_when_asked_and_only_a_single_call(
    settings: Settings,
) -> None:
    tools = ToolActivities(settings)
    await asyncio.to_thread(tools.prepare)
    try:
        agents = AgentActivities(settings, assess=tools.assess_tool_call)
        env = ActivityEnvironment()

        async def step(text: str, *, asked: bool = True) -> AgentResult:
            messages = [UniversalMessage(role="user", content=text, name="al")]
            stepped = AgentStepInput(
                agent_id="Agent:demo",
                owner_id="session:x",
                messages=messages,
                tools=["sql"],
                assess=StepAssessment() if asked else None,
            )
            result: AgentResult = await env.run(agents.agent_step, stepped)
            return result

        delete = await step(DELETE_CANCELLED)
        gate = await env.run(tools.assess_tool_call, AssessRequest(call=delete.output.intent))
        assert delete.assessment == gate and gate.needs_approval
        select = await step("SELECT 1")
        assert select.assessment is not None and not select.assessment.needs_approval
        assert (await step(DELETE_CANCELLED, asked=False)).assessment is None, "not asked: the gate assesses"
        assert (await step("hello")).assessment is None, "an answer proposes no call"
    finally:
        await tools.close()


class _Host:
    """What `Assessed.stands_for` reads of the gate's host: the rule context."""

    def __init__(self, rules: RuleContext | None) -> None:
        self.rules = rules


SQL = ToolCallRequest(tool_id="sql", arguments={"sql": DELETE_CANCELLED})
TERMINAL = ToolCallRequest(tool_id="terminal", arguments={"command": "ls"})
MADE = ToolAssessment(tool_id="sql", known=True, needs_approval=True, reason="DELETE", summary="sql: DELETE")
ALICE = RuleContext(user="alice")


@pytest.mark.parametrize(
    ("given", "call", "state", "rules", "stands"),
    [
        (StepAssessment(rules=ALICE), SQL, {}, ALICE, True),
        (StepAssessment(rules=ALICE), TERMINAL, {}, ALICE, False),  # another call's tool
        (StepAssessment(rules=ALICE), SQL, {}, RuleContext(user="bob"), False),  # other rules now
        (StepAssessment(rules=None), SQL, {}, ALICE, False),
        (StepAssessment(states={"sql": {"cwd": "/a"}}), SQL, {"cwd": "/a"}, None, True),
        (StepAssessment(states={"sql": {"cwd": "/a"}}), SQL, {"cwd": "/b"}, None, False),  # moved since
        (StepAssessment(states={"sql": {"cwd": "/a"}}), SQL, {}, None, False),
    ],
    ids=[
        "same",
        "other-tool",
        "other-rules",
        "rules-since",
        "same-state",
        "other-state",
        "state-gone",
    ],
)
def test_the_gate_takes_a_steps_assessment_only_when_it_would_make_the_same_one(
    given: StepAssessment,
    call: ToolCallRequest,
    state: dict[str, Any],
    rules: RuleContext | None,
    stands: bool,
) -> None:
    assessed = Assessed.of(
        AgentResult(status="SUCCESS", output=AgentIntent(thought="", intent=call), assessment=MADE), given
    )
    assert assessed is not None
    assert assessed.stands_for(call, state, _Host(rules)) is stands  # type: ignore[arg-type]


def test_a_step_not_asked_for_an_assessment_brings_none() -> None:
    result = AgentResult(status="SUCCESS", output=AgentIntent(thought="", intent=SQL), assessment=MADE)
    assert Assessed.of(result, None) is None
    assert Assessed.of(result.model_copy(update={"assessment": None}), StepAssessment()) is None


async def test_a_step_drops_an_assessment_it_was_not_asked_for_and_survives_a_failing_one(
    settings: Settings,
) -> None:
    async def lying(step: AgentStepInput) -> AgentResult:  # an adapter that claims a call is free
        free = MADE.model_copy(update={"needs_approval": False})
        return AgentResult(status="SUCCESS", output=AgentIntent(thought="", intent=SQL), assessment=free)

    async def broken(request: AssessRequest) -> ToolAssessment:
        raise OSError("rules store unreachable")

    agents = AgentActivities(settings, assess=broken)
    agents.agents["Agent:liar"] = lying
    env = ActivityEnvironment()
    unasked = AgentStepInput(agent_id="Agent:liar", owner_id="session:x")
    assert (await env.run(agents.agent_step, unasked)).assessment is None, "not asked: dropped"
    asked = AgentStepInput(
        agent_id="Agent:demo",
        owner_id="session:x",
        messages=[UniversalMessage(role="user", content=DELETE_CANCELLED, name="al")],
        tools=["sql"],
        assess=StepAssessment(),
    )
    result = await env.run(agents.agent_step, asked)
    assert result.status == "SUCCESS" and isinstance(result.output.intent, ToolCallRequest)
    assert result.assessment is None, "the assessment failed: the gate's own local activity assesses"
