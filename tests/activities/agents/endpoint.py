"""An agent declared against the loopback OpenAI-compatible stand-in, a step of it, and the checks
every adapter on such an endpoint must pass: what the LangGraph and AutoGen adapter tests share
(the `fake` fixture is in conftest.py)."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

from activities.tools.registry import builtin_tools
from contracts import (
    AgentResult,
    AgentSpec,
    AgentStepInput,
    ToolCallBatch,
    ToolCallRequest,
    ToolDescriptor,
    UniversalMessage,
)
from tests.fakes.chat_completions import FakeChatCompletions, tool_calls

KEY = "sk-test-0123456789abcdef"
"""The stand-in's API key, read by the agents from `KEY_ENV`."""
KEY_ENV = "ANALYST_KEY"


def analyst(fake: FakeChatCompletions, framework: str, **fields: Any) -> AgentSpec:
    """Agent `analyst` on `framework`, calling model `gpt-test` of the stand-in."""
    return AgentSpec.model_validate(
        {
            "name": "analyst",
            "framework": framework,
            "model": "gpt-test",
            "base_url": fake.base_url,
            "api_key_env": KEY_ENV,
            "instruction": "You are a careful analyst.",
            **fields,
        }
    )


def step(
    spec: AgentSpec, *messages: UniversalMessage, input_data: dict[str, Any] | None = None
) -> AgentStepInput:
    """A step of `spec` on `messages` (one question when none)."""
    conversation = list(messages) or [UniversalMessage(role="user", content="How many orders?")]
    return AgentStepInput(
        agent_id=f"Agent:{spec.name}",
        owner_id="session:s",
        messages=conversation,
        tools=spec.tools,
        agent=spec,
        input_data=input_data,
    )


Step = Callable[[AgentStepInput, dict[str, ToolDescriptor]], Awaitable[AgentResult]]
"""An adapter's step activity body: `(step input, tools) -> output`."""
TOOLS = builtin_tools()
SELECT = '{"sql": "SELECT * FROM orders"}'


async def check_two_calls_are_a_batch_in_order(fake: FakeChatCompletions, run: Step, framework: str) -> None:
    """Two calls in one model turn come back as one batch, in the model's order, with its call ids."""
    fake.enqueue(
        tool_calls([("call_b", "sql", '{"sql": "SELECT 2"}'), ("call_a", "sql", '{"sql": "SELECT 1"}')])
    )

    result = await run(step(analyst(fake, framework)), TOOLS)

    assert result.output.intent == ToolCallBatch(
        calls=[
            ToolCallRequest(tool_id="sql", arguments={"sql": "SELECT 2"}, call_id="call_b"),
            ToolCallRequest(tool_id="sql", arguments={"sql": "SELECT 1"}, call_id="call_a"),
        ]
    )


async def check_an_invalid_call_is_sent_back_once_then_fails(
    fake: FakeChatCompletions, run: Step, framework: str, bad_call: tuple[str, str, str], problem: str
) -> None:
    """`bad_call` is answered with `problem` and the model asked again once; twice bad fails the step."""
    fake.enqueue(tool_calls([bad_call]), tool_calls([("call_y", "sql", SELECT)]))

    fixed = await run(step(analyst(fake, framework)), TOOLS)

    assert fixed.output.intent == ToolCallRequest(
        tool_id="sql", arguments={"sql": "SELECT * FROM orders"}, call_id="call_y"
    )
    assert fixed.metadata is not None and problem in fixed.metadata["reasked"][0]
    assert problem in json.dumps(fake.requests[1]["messages"][-1])
    assert len(fake.requests) == 2

    fake.enqueue(tool_calls([bad_call]), tool_calls([bad_call]))
    failed = await run(step(analyst(fake, framework)), TOOLS)

    assert failed.status == "FAILURE"
    assert failed.failure_details is not None and failed.failure_details.type == "VALIDATION_ERROR"
    assert len(fake.requests) == 4  # asked once more, never a third time
