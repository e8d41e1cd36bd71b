"""`Agent:demo-langgraph`: the demo rules as a LangChain chat model inside the LangGraph adapter.

The twin must give the same intents (and thoughts) as `demo_agent.decide`; only the tool calls
differ, by carrying the model's call id.
"""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from temporalio.testing import ActivityEnvironment

from activities.agents.demo import decide
from activities.agents.langgraph.agent import langgraph_step
from activities.agents.langgraph.demo_model import DemoChatModel
from activities.agents.langgraph.messages import from_langchain, to_langchain
from activities.agents.step import AgentActivities
from activities.tools.registry import builtin_tools
from contracts import (
    AgentResult,
    AgentSpec,
    AgentStepInput,
    FinalAnswer,
    ToolCallRequest,
    ToolResult,
    UniversalMessage,
)
from core.settings import Settings
from tests.activities.agents.demo_tools import TOOLS

TWIN = AgentSpec(name="demo-langgraph", framework="langgraph", model="demo", tools=["sql", "terminal"])
PLAN = '{"new_tasks": [{"task_id": "hello", "input_data": {"echo": "hi"}, "assignee_id": "Agent:demo"}]}'


def user(text: str) -> UniversalMessage:
    return UniversalMessage(role="user", content=text, name="alice")


def sql_result(call_id: str | None = None) -> list[UniversalMessage]:
    """A DELETE proposed, approved and run, as the workflow records it."""
    call = {"tool_id": "sql", "arguments": {"sql": "DELETE FROM orders"}, "call_id": call_id}
    result = ToolResult(tool_id="sql", ok=True, content={"statement": "DELETE", "rowcount": 3})
    return [
        user("DELETE FROM orders"),
        UniversalMessage(role="assistant", content={"tool_call": call}),
        UniversalMessage(
            role="tool", name="sql", tool_call_id="tool_1", content=result.model_dump(mode="json")
        ),
    ]


def step(messages: list[UniversalMessage], input_data: dict[str, Any] | None = None) -> AgentStepInput:
    return AgentStepInput(
        agent_id="Agent:demo-langgraph",
        owner_id="session:test",
        messages=messages,
        tools=TWIN.tools,
        input_data=input_data,
        agent=TWIN,
    )


def without_call_id(result: AgentResult) -> Any:
    intent = result.output.intent
    return intent.model_copy(update={"call_id": None}) if isinstance(intent, ToolCallRequest) else intent


@pytest.mark.parametrize(
    ("messages", "input_data"),
    [
        pytest.param([user("SELECT * FROM orders")], None, id="sql-text"),
        pytest.param([user("earlier"), user("!ls")], None, id="bang-command"),
        pytest.param(sql_result(), None, id="tool-result"),
        pytest.param(sql_result("call_7"), None, id="tool-result-with-call-id"),
        pytest.param([user("hello there")], None, id="plain-text"),
        pytest.param([user(f"plan: {PLAN}")], None, id="plan"),
        pytest.param([], {"echo": "hi"}, id="task-echo"),
        pytest.param([], {"a": 1, "b": [2]}, id="task-echo-inputs"),
        pytest.param([], {"sql": "SELECT 1"}, id="task-sql"),
    ],
)
async def test_the_twin_decides_like_the_demo_agent(
    messages: list[UniversalMessage], input_data: dict[str, Any] | None
) -> None:
    expected = decide(step(messages, input_data))

    result = await langgraph_step(step(messages, input_data), TOOLS)

    assert result.status == "SUCCESS"
    assert without_call_id(result) == expected.output.intent
    assert result.output.thought == expected.output.thought
    assert result.metadata is not None
    assert (result.metadata["framework"], result.metadata["model"]) == ("langgraph", "demo")


async def test_a_tool_call_carries_the_model_call_id() -> None:
    result = await langgraph_step(step([user("SELECT * FROM orders")]), TOOLS)

    assert result.output.intent == ToolCallRequest(
        tool_id="sql", arguments={"sql": "SELECT * FROM orders"}, call_id="demo_0"
    )


async def test_a_denial_is_reported_like_the_demo_agent() -> None:
    denial = {"denied": True, "decided_by": "bob", "message": "not now", "reason": "a person denied it"}
    messages = [*sql_result()[:2], UniversalMessage(role="tool", name="sql", content=denial)]

    result = await langgraph_step(step(messages), TOOLS)

    assert result.output.intent == FinalAnswer(
        content='I did not run sql: denied by bob (a person denied it) — "not now".'
    )


async def test_input_data_fail_is_a_failure_like_the_demo_agent() -> None:
    expected = decide(step([], {"fail": {"type": "QUOTA_EXCEEDED", "message": "no budget"}}))

    result = await langgraph_step(
        step([], {"fail": {"type": "QUOTA_EXCEEDED", "message": "no budget"}}), TOOLS
    )

    assert result.status == "FAILURE"
    assert result.failure_details == expected.failure_details
    assert result.output.intent == expected.output.intent


async def test_a_tool_the_agent_may_not_use_is_refused() -> None:
    sql_only = TWIN.model_copy(update={"tools": ["sql"]})
    request = step([user("!ls")]).model_copy(update={"agent": sql_only, "tools": ["sql"]})
    result = await langgraph_step(request, builtin_tools())

    assert result.output.intent == FinalAnswer(
        content="I cannot use the terminal tool here; the tools I may use are: sql, ask_user."
    )


@pytest.mark.parametrize("declared", [False, True], ids=["builtin-id", "declared-spec"])
async def test_agent_step_runs_the_twin_through_the_langgraph_adapter(tmp_path: Any, declared: bool) -> None:
    acts = AgentActivities(Settings(data_dir=tmp_path))
    spec = AgentSpec(name="mine", framework="langgraph", model="demo") if declared else None
    agent_step = AgentStepInput(
        agent_id="Agent:mine" if declared else "Agent:demo-langgraph",
        owner_id="session:test",
        messages=[user("SELECT * FROM orders")],
        agent=spec,
    )

    result = await ActivityEnvironment().run(acts.agent_step, agent_step)

    assert result.output.intent == ToolCallRequest(
        tool_id="sql", arguments={"sql": "SELECT * FROM orders"}, call_id="demo_0"
    )
    assert result.metadata == {"framework": "langgraph", "model": "demo"}


def test_bind_tools_keeps_the_tool_names() -> None:
    schema = {"type": "function", "function": {"name": "sql", "parameters": {"type": "object"}}}

    bound = DemoChatModel().bind_tools([schema])

    assert isinstance(bound, DemoChatModel) and bound.tool_names == ["sql"]
    reply = bound.invoke([HumanMessage(content="SELECT 1")])
    assert reply.tool_calls == [
        {"id": "demo_0", "name": "sql", "args": {"sql": "SELECT 1"}, "type": "tool_call"}
    ]


def test_workflow_messages_become_answered_tool_calls() -> None:
    batch = [
        {"tool_id": "sql", "arguments": {"sql": "SELECT 1"}, "call_id": "call_a"},
        {"tool_id": "sql", "arguments": {"sql": "SELECT 2"}, "call_id": "call_b"},
    ]
    messages = [
        user("two queries"),
        UniversalMessage(role="assistant", content={"tool_calls": batch}),
        UniversalMessage(role="tool", name="sql", tool_call_id="call_b", content={"ok": True}),
        UniversalMessage(role="tool", name="sql", tool_call_id="interaction-1", content={"ok": True}),
        UniversalMessage(role="assistant", content={"tool_call": {"tool_id": "sql", "arguments": {}}}),
        user("never mind"),
    ]

    converted = to_langchain(messages, instruction="Be brief.", input_data={"x": 1})

    assert [type(m).__name__ for m in converted] == [
        "SystemMessage",
        "HumanMessage",
        "HumanMessage",
        "AIMessage",
        "ToolMessage",
        "ToolMessage",
        "AIMessage",
        "ToolMessage",
        "HumanMessage",
    ]
    assert isinstance(converted[3], AIMessage)
    assert [c["id"] for c in converted[3].tool_calls] == ["call_a", "call_b"]
    answered = [m.tool_call_id for m in converted if isinstance(m, ToolMessage)]
    assert answered == ["call_b", "call_a", "call_4_0"]  # by id, then the oldest open call
    back, input_data = from_langchain(converted)
    assert input_data == {"x": 1}
    assert back[1].content == {"tool_calls": batch}
