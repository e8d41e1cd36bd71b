"""`DemoChatCompletionClient`: the offline demo rules (agents/demo_twin.py) as an AutoGen model client.

It is what `Agent:demo-autogen` runs, so the AutoGen adapter is exercised end to end with no
network and deterministic answers: a tool call is a `CreateResult` whose content is one
`FunctionCall`, the rules' reasoning is its `thought`, and a reply is its text. The rules see
the tools AutoGen passes to `create` and decide the call themselves.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Mapping, Sequence
from typing import Any, Literal

from autogen_core import CancellationToken
from autogen_core.models import (
    ChatCompletionClient,
    CreateResult,
    LLMMessage,
    ModelCapabilities,
    ModelInfo,
    RequestUsage,
)
from autogen_core.tools import Tool, ToolSchema
from pydantic import BaseModel

from ..demo_twin import demo_reply
from .messages import autogen_turns, function_call

DEMO_INFO = ModelInfo(
    vision=False, function_calling=True, json_output=False, family="synapse-demo", structured_output=False
)
_NO_USAGE = RequestUsage(prompt_tokens=0, completion_tokens=0)


def _name(tool: Tool | ToolSchema) -> str:
    return tool["name"] if isinstance(tool, dict) else tool.name


class DemoChatCompletionClient(ChatCompletionClient):
    """The demo rules behind AutoGen's model-client interface (deterministic, offline)."""

    async def create(
        self,
        messages: Sequence[LLMMessage],
        *,
        tools: Sequence[Tool | ToolSchema] = [],
        tool_choice: Tool | Literal["auto", "required", "none"] = "auto",
        json_output: bool | type[BaseModel] | None = None,
        extra_create_args: Mapping[str, Any] = {},
        cancellation_token: CancellationToken | None = None,
    ) -> CreateResult:
        """The rules' reply to `messages`.

        Raises:
            DemoModelFailure: The rules returned a `FAILURE`.
        """
        reply = demo_reply(autogen_turns(list(messages)), [_name(t) for t in tools], "Agent:demo-autogen")
        if reply.call is not None:
            content: Any = [function_call(reply.call)]
            return CreateResult(
                finish_reason="function_calls",
                content=content,
                usage=_NO_USAGE,
                cached=False,
                thought=reply.thought,
            )
        return CreateResult(
            finish_reason="stop", content=reply.text, usage=_NO_USAGE, cached=False, thought=reply.thought
        )

    async def create_stream(  # an async generator, as AutoGen's own clients
        self,
        messages: Sequence[LLMMessage],
        *,
        tools: Sequence[Tool | ToolSchema] = [],
        tool_choice: Tool | Literal["auto", "required", "none"] = "auto",
        json_output: bool | type[BaseModel] | None = None,
        extra_create_args: Mapping[str, Any] = {},
        cancellation_token: CancellationToken | None = None,
    ) -> AsyncGenerator[str | CreateResult, None]:
        """The reply in one piece."""
        yield await self.create(messages, tools=tools)

    async def close(self) -> None:
        """Nothing to close."""

    def actual_usage(self) -> RequestUsage:
        return _NO_USAGE

    def total_usage(self) -> RequestUsage:
        return _NO_USAGE

    def count_tokens(self, messages: Sequence[LLMMessage], *, tools: Sequence[Tool | ToolSchema] = []) -> int:
        return 0

    def remaining_tokens(
        self, messages: Sequence[LLMMessage], *, tools: Sequence[Tool | ToolSchema] = []
    ) -> int:
        return 1_000_000

    @property
    def capabilities(self) -> ModelCapabilities:
        return {"vision": False, "function_calling": True, "json_output": False}

    @property
    def model_info(self) -> ModelInfo:
        return DEMO_INFO
