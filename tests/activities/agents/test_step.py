"""The `agent_step` activity: agent dispatch, unknown agents, and `sleep_seconds`."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from temporalio import activity
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

from activities.agents import step as agents
from activities.agents.step import AgentActivities
from contracts import AgentIntent, AgentResult, AgentStepInput, FinalAnswer, ToolCallRequest, UniversalMessage
from core.settings import Settings


@pytest.fixture
def acts(tmp_path: Path) -> AgentActivities:
    return AgentActivities(Settings(data_dir=tmp_path))


def step(agent_id: str = "Agent:demo", **fields: object) -> AgentStepInput:
    return AgentStepInput.model_validate({"agent_id": agent_id, "owner_id": "session:test", **fields})


def test_activities_are_registered_under_their_names(acts: AgentActivities) -> None:
    names = [activity._Definition.must_from_callable(fn).name for fn in acts.activities()]

    assert names == ["agent_step"]


async def test_demo_agent_step(acts: AgentActivities) -> None:
    messages = [UniversalMessage(role="user", content="SELECT * FROM orders")]

    result = await ActivityEnvironment().run(acts.agent_step, step(messages=messages))

    assert result.output.intent == ToolCallRequest(tool_id="sql", arguments={"sql": "SELECT * FROM orders"})


async def test_unknown_agent_is_a_non_retryable_error(acts: AgentActivities) -> None:
    with pytest.raises(ApplicationError) as caught:
        await ActivityEnvironment().run(acts.agent_step, step("Agent:nope"))

    assert caught.value.type == "UnknownAgent"
    assert caught.value.non_retryable
    assert caught.value.message == (
        "no agent named 'Agent:nope'; known agents: Agent:demo, Agent:demo-adk, Agent:demo-autogen, "
        "Agent:demo-langgraph"
    )


async def test_registered_agents_are_dispatched(acts: AgentActivities) -> None:
    async def other(s: AgentStepInput) -> AgentResult:
        return AgentResult(
            status="SUCCESS", output=AgentIntent(thought="other", intent=FinalAnswer(content=s.owner_id))
        )

    acts.agents["Agent:other"] = other

    result = await ActivityEnvironment().run(acts.agent_step, step("Agent:other"))

    assert result.output.intent == FinalAnswer(content="session:test")


async def test_sleep_seconds_waits_while_heartbeating(
    acts: AgentActivities, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(agents, "_HEARTBEAT_SECONDS", 0.05)
    env = ActivityEnvironment()
    beats: list[float] = []
    env.on_heartbeat = lambda *details: beats.append(details[0])

    result = await env.run(acts.agent_step, step(input_data={"sleep_seconds": 0.3, "echo": "awake"}))

    assert result.output.intent == FinalAnswer(content="awake")
    assert len(beats) >= 5
    assert beats == sorted(beats) and beats[-1] >= 0.3


async def test_a_retried_sleep_resumes_from_its_last_heartbeat(acts: AgentActivities) -> None:
    env = ActivityEnvironment()
    env.info = dataclasses.replace(env.info, attempt=2, heartbeat_details=[3600.0])
    beats: list[float] = []
    env.on_heartbeat = lambda *details: beats.append(details[0])

    result = await env.run(acts.agent_step, step(input_data={"sleep_seconds": 3600, "echo": "done"}))

    assert result.output.intent == FinalAnswer(content="done")
    assert beats == []


@pytest.mark.parametrize("value", ["soon", -1, True])
async def test_a_bad_sleep_seconds_is_a_non_retryable_error(acts: AgentActivities, value: object) -> None:
    with pytest.raises(ApplicationError) as caught:
        await ActivityEnvironment().run(acts.agent_step, step(input_data={"sleep_seconds": value}))

    assert caught.value.type == "InvalidAgentInput" and caught.value.non_retryable
    assert (
        f"input_data.sleep_seconds must be a non-negative number of seconds, got {value!r}"
        == caught.value.message
    )
