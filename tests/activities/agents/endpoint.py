"""An agent declared against the loopback OpenAI-compatible stand-in, and a step of it: what the
LangGraph and AutoGen adapter tests share (the `fake` fixture is in conftest.py)."""

from __future__ import annotations

from typing import Any

from contracts import AgentSpec, AgentStepInput, UniversalMessage
from tests.fakes.chat_completions import FakeChatCompletions

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
