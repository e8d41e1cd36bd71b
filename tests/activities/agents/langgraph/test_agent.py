"""The LangGraph adapter against an OpenAI-compatible endpoint (the loopback fake): tool calls
with the model's ids, batches, re-asks on invalid calls, model errors, fallbacks, and tools
that are declared but never run."""

from __future__ import annotations

import json
from typing import Any

import pytest
from temporalio.exceptions import ApplicationError

from activities.agents.langgraph import agent as langgraph_agent
from activities.agents.langgraph import graph as langgraph_graph
from activities.agents.langgraph.agent import langgraph_step
from contracts import (
    AgentContextConfig,
    AgentSpec,
    FinalAnswer,
    PlanBlueprint,
    ToolCallRequest,
    UniversalMessage,
)
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


def roles(request: dict[str, Any]) -> list[str]:
    return [message["role"] for message in request["messages"]]


async def test_a_tool_call_round_trip_keeps_the_model_call_id(fake: FakeChatCompletions) -> None:
    fake.enqueue(tool_calls([("call_1", "sql", SELECT)], content="Let me count them."), text("There are 3."))
    spec = analyst(fake, "langgraph")

    first = await langgraph_step(step(spec), TOOLS)

    call = ToolCallRequest(tool_id="sql", arguments={"sql": "SELECT * FROM orders"}, call_id="call_1")
    assert first.output.intent == call
    assert first.output.thought == "Let me count them."
    assert first.metadata == {
        "framework": "langgraph",
        "model": "gpt-test",
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }
    request = fake.requests[0]
    assert request["authorization"] == f"Bearer {KEY}"
    assert roles(request) == ["system", "user"]
    assert [t["function"]["name"] for t in request["tools"]] == ["sql", "ask_user"], (
        "ask_user is declared to every agent"
    )
    assert request["tools"][0]["function"]["parameters"] == TOOLS["sql"].arguments_schema

    history = [  # as the workflow records it: the tool message carries the interaction id
        UniversalMessage(role="user", content="How many orders?"),
        UniversalMessage(role="assistant", content={"tool_call": call.model_dump(mode="json")}),
        UniversalMessage(role="tool", name="sql", tool_call_id="tool_1", content={"ok": True, "content": 3}),
    ]
    second = await langgraph_step(step(spec, *history), TOOLS)

    assert second.output.intent == FinalAnswer(content="There are 3.")
    sent = fake.requests[1]["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "tool"]
    assert sent[2]["tool_calls"][0]["id"] == "call_1"
    assert json.loads(sent[2]["tool_calls"][0]["function"]["arguments"]) == {"sql": "SELECT * FROM orders"}
    assert sent[3]["tool_call_id"] == "call_1"
    assert json.loads(sent[3]["content"]) == {"ok": True, "content": 3}


async def test_two_calls_in_one_turn_are_a_batch_in_order(fake: FakeChatCompletions) -> None:
    await check_two_calls_are_a_batch_in_order(fake, langgraph_step, "langgraph")


async def test_a_plan_answer_is_a_blueprint_and_task_json_is_a_value(fake: FakeChatCompletions) -> None:
    plan = {"new_tasks": [{"task_id": "t", "input_data": {"echo": "hi"}, "assignee_id": "Agent:demo"}]}
    fake.enqueue(text(f"plan: {json.dumps(plan)}"), text('{"total": 3}'))

    planned = await langgraph_step(step(analyst(fake, "langgraph")), TOOLS)
    answered = await langgraph_step(step(analyst(fake, "langgraph"), input_data={"q": "total"}), TOOLS)

    assert planned.output.intent == PlanBlueprint.model_validate(plan)
    assert answered.output.intent == FinalAnswer(content={"total": 3})
    assert fake.requests[1]["messages"][1] == {"role": "user", "content": 'Task input (JSON): {"q": "total"}'}


@pytest.mark.parametrize(
    ("bad_call", "problem"),
    [
        pytest.param(("call_x", "sql", '{"sql": "SELECT'), "are not valid JSON", id="malformed-json"),
        pytest.param(
            ("call_x", "shell", '{"cmd": "ls"}'), "there is no tool named 'shell'", id="unknown-tool"
        ),
        pytest.param(("call_x", "sql", '{"query": "SELECT 1"}'), "'sql' is a required property", id="schema"),
        pytest.param(("call_x", "sql", "[1]"), "could not be read", id="not-an-object"),
    ],
)
async def test_an_invalid_call_is_sent_back_once_then_fails(
    fake: FakeChatCompletions, bad_call: tuple[str, str, str], problem: str
) -> None:
    await check_an_invalid_call_is_sent_back_once_then_fails(
        fake, langgraph_step, "langgraph", bad_call, problem
    )


async def test_a_valid_call_beside_an_invalid_one_is_answered_too(fake: FakeChatCompletions) -> None:
    fake.enqueue(tool_calls([("call_1", "sql", SELECT), ("call_2", "nope", "{}")]), text("ok"))

    await langgraph_step(step(analyst(fake, "langgraph")), TOOLS)

    answered = [m for m in fake.requests[1]["messages"] if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in answered] == ["call_1", "call_2"]
    assert "another call of this turn was invalid" in answered[0]["content"]


async def test_a_bad_key_is_an_authentication_failure_without_the_key(fake: FakeChatCompletions) -> None:
    fake.enqueue(error_reply(401, f"Incorrect API key provided: {KEY}.", "invalid_api_key"))

    result = await langgraph_step(step(analyst(fake, "langgraph")), TOOLS)

    assert result.status == "FAILURE"
    assert result.failure_details is not None
    assert result.failure_details.type == "AUTHENTICATION_FAILED"
    assert KEY not in result.model_dump_json() and "0123456789" not in result.model_dump_json()


async def test_a_spent_quota_is_quota_exceeded(fake: FakeChatCompletions) -> None:
    fake.enqueue(error_reply(429, "You exceeded your current quota.", "insufficient_quota"))

    result = await langgraph_step(step(analyst(fake, "langgraph")), TOOLS)

    assert result.failure_details is not None and result.failure_details.type == "QUOTA_EXCEEDED"


@pytest.mark.parametrize(
    "reply",
    [
        pytest.param(error_reply(429, "Rate limit reached.", "rate_limit_exceeded"), id="rate-limit"),
        pytest.param(error_reply(500, "The server had an error."), id="server-error"),
        pytest.param(text("late", delay=1.0), id="timeout"),
    ],
)
async def test_a_transient_error_is_a_retryable_application_error(
    fake: FakeChatCompletions, reply: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(langgraph_agent, "MODEL_TIMEOUT_SECONDS", 0.3)
    fake.enqueue(reply)

    with pytest.raises(ApplicationError) as caught:
        await langgraph_step(step(analyst(fake, "langgraph")), TOOLS)

    assert caught.value.type == "ModelUnavailable"
    assert not caught.value.non_retryable
    assert "gpt-test" in caught.value.message


async def test_fallback_models_are_tried_in_order(fake: FakeChatCompletions) -> None:
    fake.enqueue(
        error_reply(404, "The model `gpt-test` does not exist.", "model_not_found"),
        error_reply(500, "overloaded"),
        text("from the second fallback"),
    )
    spec = analyst(fake, "langgraph", fallback_models=["gpt-fallback", "gpt-last"])

    result = await langgraph_step(step(spec), TOOLS)

    assert result.output.intent == FinalAnswer(content="from the second fallback")
    assert result.metadata is not None and result.metadata["model"] == "gpt-last"
    assert [m.split(" failed")[0] for m in result.metadata["failed_models"]] == [
        "model 'gpt-test'",
        "model 'gpt-fallback'",
    ]
    assert [r["model"] for r in fake.requests] == ["gpt-test", "gpt-fallback", "gpt-last"]


async def test_no_tools_are_sent_when_the_tool_list_is_off(fake: FakeChatCompletions) -> None:
    fake.enqueue(text("no tools for me"))
    spec = analyst(fake, "langgraph", context=AgentContextConfig(include_tool_list=False))

    result = await langgraph_step(step(spec), TOOLS)

    assert result.output.intent == FinalAnswer(content="no tools for me")
    assert "tools" not in fake.requests[0]


async def test_the_graph_never_runs_a_tool(
    fake: FakeChatCompletions, monkeypatch: pytest.MonkeyPatch
) -> None:
    ran: list[Any] = []

    def run_tools(state: Any) -> dict[str, Any]:
        ran.append(state)
        return {"messages": []}

    monkeypatch.setattr(langgraph_graph, "_run_tools", run_tools)
    fake.enqueue(tool_calls([("call_1", "sql", '{"sql": "DELETE FROM orders"}')]))

    result = await langgraph_step(step(analyst(fake, "langgraph")), TOOLS)

    assert isinstance(result.output.intent, ToolCallRequest)
    assert ran == []
    assert len(fake.requests) == 1


async def test_a_gemini_model_needs_adk_or_a_base_url() -> None:
    spec = AgentSpec(name="g", framework="langgraph", model="gemini-2.0-flash")

    result = await langgraph_step(step(spec), TOOLS)

    assert result.failure_details is not None
    assert result.failure_details.type == "VALIDATION_ERROR"
    assert 'framework = "adk"' in result.failure_details.message


async def test_a_missing_key_variable_is_an_authentication_failure(fake: FakeChatCompletions) -> None:
    result = await langgraph_step(step(analyst(fake, "langgraph", api_key_env="NO_SUCH_KEY_VAR")), TOOLS)

    assert result.failure_details is not None
    assert result.failure_details.type == "AUTHENTICATION_FAILED"
    assert "NO_SUCH_KEY_VAR" in result.failure_details.message
    assert fake.requests == []
