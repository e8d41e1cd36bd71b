"""The AutoGen adapter: its demo twin decides like the demo agent, and against an OpenAI-compatible
endpoint (the loopback fake) it keeps the model's call ids, re-asks once on invalid calls, falls
back across models, and never runs a tool."""

from __future__ import annotations

import json
from typing import Any

import pytest
from autogen_core.models import FunctionExecutionResultMessage

from activities.agents.autogen import agent as autogen_agent
from activities.agents.autogen.agent import autogen_step
from activities.agents.autogen.messages import autogen_messages
from activities.agents.conversation import turns
from activities.agents.demo import decide
from contracts import FinalAnswer, ToolCallRequest, UniversalMessage
from core.agent_registry import BUILTIN_AGENTS
from tests.activities.agents.endpoint import (
    KEY,
    SELECT,
    TOOLS,
    analyst,
    check_an_invalid_call_is_sent_back_once_then_fails,
    check_two_calls_are_a_batch_in_order,
    step,
)
from tests.fakes.chat_completions import FakeChatCompletions, text, tool_calls
from tests.fakes.chat_completions import error as error_reply

TWIN = BUILTIN_AGENTS["demo-autogen"]


def user(content: str) -> UniversalMessage:
    return UniversalMessage(role="user", content=content)


@pytest.mark.parametrize(
    ("messages", "input_data"),
    [
        pytest.param([user("SELECT * FROM orders")], None, id="sql-text"),
        pytest.param([user("!ls")], None, id="bang-command"),
        pytest.param([user("hello there")], None, id="plain-text"),
        pytest.param([user("ask: which table?")], None, id="question"),
        pytest.param([], {"echo": "hi"}, id="task-echo"),
        pytest.param([], {"sql": "SELECT 1"}, id="task-sql"),
    ],
)
async def test_the_twin_decides_like_the_demo_agent(
    messages: list[UniversalMessage], input_data: dict[str, Any] | None
) -> None:
    expected = decide(step(TWIN, *messages, input_data=input_data))

    result = await autogen_step(step(TWIN, *messages, input_data=input_data), TOOLS)

    intent = result.output.intent
    if isinstance(intent, ToolCallRequest):
        assert intent.call_id == "demo_0", "the twin's call carries the model's call id"
        intent = intent.model_copy(update={"call_id": None})
    assert intent == expected.output.intent
    assert result.output.thought == expected.output.thought
    assert result.metadata == {"framework": "autogen", "model": "demo"}


async def test_a_tool_call_round_trip_keeps_the_model_call_id(fake: FakeChatCompletions) -> None:
    fake.enqueue(tool_calls([("call_1", "sql", SELECT)], content="Let me count them."), text("There are 3."))
    spec = analyst(fake, "autogen")

    first = await autogen_step(step(spec), TOOLS)

    call = ToolCallRequest(tool_id="sql", arguments={"sql": "SELECT * FROM orders"}, call_id="call_1")
    assert first.output.intent == call
    assert first.output.thought == "Let me count them."
    assert first.metadata is not None and first.metadata["usage"]["total_tokens"] == 15
    request = fake.requests[0]
    assert request["authorization"] == f"Bearer {KEY}"
    assert [m["role"] for m in request["messages"]] == ["system", "user"]
    assert request["tools"][0]["function"]["parameters"] == TOOLS["sql"].arguments_schema

    history = [  # as the workflow records it: the tool message carries the interaction id
        user("How many orders?"),
        UniversalMessage(role="assistant", content={"tool_call": call.model_dump(mode="json")}),
        UniversalMessage(role="tool", name="sql", tool_call_id="tool_1", content={"ok": True, "content": 3}),
    ]
    second = await autogen_step(step(spec, *history), TOOLS)

    assert second.output.intent == FinalAnswer(content="There are 3.")
    sent = fake.requests[1]["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "tool"]
    assert sent[2]["tool_calls"][0]["id"] == "call_1"
    assert sent[3]["tool_call_id"] == "call_1"
    assert json.loads(sent[3]["content"]) == {"ok": True, "content": 3}


async def test_two_calls_in_one_turn_are_a_batch_in_order(fake: FakeChatCompletions) -> None:
    await check_two_calls_are_a_batch_in_order(fake, autogen_step, "autogen")


@pytest.mark.parametrize(
    ("bad_call", "problem"),
    [
        pytest.param(("call_x", "sql", '{"sql": "SELECT'), "must be a JSON object", id="malformed-json"),
        pytest.param(
            ("call_x", "shell", '{"cmd": "ls"}'), "there is no tool named 'shell'", id="unknown-tool"
        ),
        pytest.param(("call_x", "sql", '{"query": "SELECT 1"}'), "'sql' is a required property", id="schema"),
        pytest.param(("call_x", "sql", "[1]"), "must be a JSON object, not [1]", id="not-an-object"),
    ],
)
async def test_an_invalid_call_is_sent_back_once_then_fails(
    fake: FakeChatCompletions, bad_call: tuple[str, str, str], problem: str
) -> None:
    await check_an_invalid_call_is_sent_back_once_then_fails(fake, autogen_step, "autogen", bad_call, problem)


async def test_fallback_models_are_tried_in_order(fake: FakeChatCompletions) -> None:
    fake.enqueue(
        error_reply(404, "The model `gpt-test` does not exist.", "model_not_found"),
        error_reply(500, "overloaded"),
        text("from the second fallback"),
    )
    spec = analyst(fake, "autogen", fallback_models=["gpt-fallback", "gpt-last"])

    result = await autogen_step(step(spec), TOOLS)

    assert result.output.intent == FinalAnswer(content="from the second fallback")
    assert result.metadata is not None and result.metadata["model"] == "gpt-last"
    assert len(result.metadata["failed_models"]) == 2
    assert [r["model"] for r in fake.requests] == ["gpt-test", "gpt-fallback", "gpt-last"]


async def test_the_agent_never_runs_a_tool(
    fake: FakeChatCompletions, monkeypatch: pytest.MonkeyPatch
) -> None:
    ran: list[Any] = []

    async def run(self: Any, args: Any, cancellation_token: Any) -> Any:
        ran.append(args)
        return "ran"

    monkeypatch.setattr(autogen_agent.DeclaredTool, "run", run)
    fake.enqueue(tool_calls([("call_1", "sql", '{"sql": "DELETE FROM orders"}')]))

    result = await autogen_step(step(analyst(fake, "autogen")), TOOLS)

    assert isinstance(result.output.intent, ToolCallRequest)
    assert ran == []
    assert len(fake.requests) == 1


def test_consecutive_results_are_one_message_and_an_unanswered_call_is_not_run() -> None:
    calls = {
        "tool_calls": [
            {"tool_id": "sql", "arguments": {"sql": "SELECT 1"}, "call_id": "a"},
            {"tool_id": "sql", "arguments": {"sql": "SELECT 2"}, "call_id": "b"},
        ]
    }
    conversation = [
        user("two queries"),
        UniversalMessage(role="assistant", content=calls),
        UniversalMessage(role="tool", name="sql", tool_call_id="a", content={"ok": True}),
        user("never mind"),
    ]

    messages = autogen_messages(turns(conversation), "agent")

    assert [type(m).__name__ for m in messages] == [
        "UserMessage",
        "AssistantMessage",
        "FunctionExecutionResultMessage",
        "UserMessage",
    ]
    results = messages[2]
    assert isinstance(results, FunctionExecutionResultMessage)
    assert [(r.call_id, r.is_error) for r in results.content] == [("a", False), ("b", True)]
    assert "not run" in results.content[1].content
