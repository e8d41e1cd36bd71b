"""One agent step with AutoGen: an AgentChat `AssistantAgent`, stopped where it would run tools.

Stateless, like every adapter: the workflow's conversation becomes the agent's model context
(autogen/messages.py), the agent is run once on it, and the step ends at the first decision.
`AssistantAgent` announces the calls it is about to execute with a `ToolCallRequestEvent`
before it executes any; the adapter closes the run there, so tools are declared to the model
but never run here (`DeclaredTool.run` raises if AutoGen ever tried). The calls go back as a
`ToolCallRequest` / `ToolCallBatch` with the model's call ids; the workflow gates and runs them,
and the next step sees results and denials as `FunctionExecutionResult`s answering those ids.

A proposed call that cannot go to the workflow (agents/proposed.py) is answered once with an
error result and the model asked again; still bad, the step is a `VALIDATION_ERROR`.

Models: `demo` is `DemoChatCompletionClient` (the offline rules); any other name is AutoGen's
`OpenAIChatCompletionClient` against `spec.base_url` (any OpenAI-compatible endpoint), its key
read from `spec.api_key_env`, its own retries off so that Temporal's retry policy is the only
backoff. `spec.fallback_models` are tried in order (agents/fallback.py).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextlib import aclosing
from typing import Any

from autogen_agentchat.agents import AssistantAgent
from autogen_agentchat.base import Response
from autogen_agentchat.messages import TextMessage, ThoughtEvent, ToolCallRequestEvent
from autogen_core import CancellationToken, FunctionCall
from autogen_core.model_context import UnboundedChatCompletionContext
from autogen_core.models import (
    ChatCompletionClient,
    FunctionExecutionResult,
    FunctionExecutionResultMessage,
    ModelInfo,
    RequestUsage,
)
from autogen_core.tools import BaseTool, ToolSchema
from autogen_ext.models.openai import OpenAIChatCompletionClient
from pydantic import BaseModel

from contracts import (
    AgentResult,
    AgentSpec,
    AgentStepInput,
    ToolCallRequest,
    ToolDescriptor,
)
from core.agent_registry import BUILTIN_AGENTS

from ...tools.registry import declared_tools
from ..answers import calls_result, final_result
from ..conversation import json_text, turns
from ..demo_twin import DemoModelFailure
from ..fallback import DEMO_MODEL, ModelFailed, across_models
from ..model_errors import ENDPOINT_ERRORS, endpoint_api_key, model_failure
from ..proposed import OTHER_CALL_INVALID, call_problem, invalid_twice
from .demo_model import DemoChatCompletionClient
from .messages import arguments, autogen_messages

MODEL_TIMEOUT_SECONDS = 120.0
"""One model call; a step makes at most two per model (a re-ask), well inside AGENT_STEP_TIMEOUT."""
DEFAULT_SPEC = BUILTIN_AGENTS["demo-autogen"]
"""The agent run when a step carries no declaration."""
AGENT = "synapse_agent"
"""The `AssistantAgent`'s name (the source of its messages)."""
ENDPOINT_INFO = ModelInfo(
    vision=False, function_calling=True, json_output=False, family="unknown", structured_output=False
)
"""What AutoGen is told of a model behind an OpenAI-compatible endpoint: it can call tools."""


class _NoArguments(BaseModel):
    """Stands in for a declared tool's argument type: its schema is the descriptor's own."""


class DeclaredTool(BaseTool[_NoArguments, Any]):
    """A tool declared to the model from its `ToolDescriptor`; AutoGen never runs it."""

    def __init__(self, descriptor: ToolDescriptor) -> None:
        super().__init__(_NoArguments, object, descriptor.name, descriptor.description)
        self.descriptor = descriptor

    @property
    def schema(self) -> ToolSchema:
        """The descriptor's name, description and JSON schema of the arguments."""
        return ToolSchema(
            name=self.descriptor.name,
            description=self.descriptor.description,
            parameters=self.descriptor.arguments_schema,  # type: ignore[typeddict-item]
        )

    async def run(self, args: _NoArguments, cancellation_token: CancellationToken) -> Any:
        """Never called: the step stops at the `ToolCallRequestEvent`; tools run in the workflow."""
        raise RuntimeError(
            f"tool {self.name!r} must not run inside the AutoGen adapter; the workflow runs tools "
            "after its approval gate"
        )


def model_client(spec: AgentSpec, model: str) -> tuple[ChatCompletionClient, str]:
    """(the model client for `model`, the API key to keep out of messages).

    Raises:
        ModelConfigError: The key's env var is named but not set.
    """
    if model == DEMO_MODEL:
        return DemoChatCompletionClient(), ""
    key = endpoint_api_key(spec)
    endpoint: dict[str, Any] = {"base_url": spec.base_url} if spec.base_url else {}
    client = OpenAIChatCompletionClient(
        model=model,
        **endpoint,
        api_key=key,
        model_info=ENDPOINT_INFO,
        max_retries=0,
        timeout=MODEL_TIMEOUT_SECONDS,
    )
    return client, key


def _add_usage(usage: dict[str, int], counts: RequestUsage | None) -> None:
    if counts is None:
        return
    usage["prompt_tokens"] = usage.get("prompt_tokens", 0) + counts.prompt_tokens
    usage["completion_tokens"] = usage.get("completion_tokens", 0) + counts.completion_tokens
    usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]


class _Run:
    """One step's agent and what it said: its thought, the calls or text it ended on, token counts."""

    def __init__(
        self,
        step: AgentStepInput,
        spec: AgentSpec,
        client: ChatCompletionClient,
        allowed: dict[str, ToolDescriptor],
    ) -> None:
        initial = autogen_messages(turns(step.messages, input_data=step.input_data), AGENT)
        self.context = UnboundedChatCompletionContext(initial_messages=initial)
        declared: list[BaseTool[Any, Any] | Callable[..., Any] | Callable[..., Awaitable[Any]]] = (
            [DeclaredTool(t) for t in allowed.values()] if spec.context.include_tool_list else []
        )
        self.agent = AssistantAgent(
            AGENT,
            model_client=client,
            tools=declared or None,
            system_message=spec.instruction or None,
            model_context=self.context,
            reflect_on_tool_use=False,
        )
        self.thought = ""
        self.usage: dict[str, int] = {}

    async def decide(self) -> list[FunctionCall] | str:
        """Run the agent on its context: the calls it is about to execute, or its text answer."""
        async with aclosing(self.agent.on_messages_stream([], CancellationToken())) as events:
            async for event in events:
                if isinstance(event, ThoughtEvent):
                    self.thought = event.content
                elif isinstance(event, ToolCallRequestEvent):
                    _add_usage(self.usage, event.models_usage)
                    return event.content  # before AutoGen executes anything: the workflow's turn
                elif isinstance(event, Response):
                    message = event.chat_message
                    _add_usage(self.usage, message.models_usage)
                    return message.content if isinstance(message, TextMessage) else message.to_text()
        raise RuntimeError("the AutoGen agent ended without an answer")

    async def reject(self, calls: list[FunctionCall], problems: dict[str, str]) -> None:
        """Answer every call of the turn with an error, saying what was wrong, for the re-ask."""
        results = [
            FunctionExecutionResult(
                content=json_text(
                    {"tool_id": c.name, "ok": False, "error": problems.get(c.id) or OTHER_CALL_INVALID}
                ),
                name=c.name,
                call_id=c.id,
                is_error=True,
            )
            for c in calls
        ]
        await self.context.add_message(FunctionExecutionResultMessage(content=results))


async def _step(
    step: AgentStepInput, spec: AgentSpec, client: ChatCompletionClient, allowed: dict[str, ToolDescriptor]
) -> AgentResult:
    run = _Run(step, spec, client, allowed)
    reasked: list[str] = []
    while True:
        decided = await run.decide()
        if isinstance(decided, str):
            result = final_result(step, decided, run.thought)
        elif not (
            problems := {c.id: p for c in decided if (p := call_problem(c.name, arguments(c), allowed))}
        ):
            calls = [ToolCallRequest(tool_id=c.name, arguments=arguments(c), call_id=c.id) for c in decided]
            result = calls_result(calls, run.thought)
        elif reasked:
            result = invalid_twice(list(problems.values()), run.thought)
        else:
            reasked.append("; ".join(problems.values()))
            await run.reject(decided, problems)
            continue
        result.metadata = {"usage": run.usage} if run.usage.get("total_tokens") else {}
        if reasked:
            result.metadata["reasked"] = reasked
        return result


async def autogen_step(step: AgentStepInput, tools: dict[str, ToolDescriptor]) -> AgentResult:
    """Run one step of an AutoGen agent: the model answers, or proposes calls the workflow gates.

    Args:
        step: The conversation, task inputs and the agent's declaration (`step.agent`;
            `DEFAULT_SPEC` when absent).
        tools: The tool registry; the agent may call those of `spec.tools` found here.

    Returns:
        A `SUCCESS` result (answer, plan, one call or a batch, with the model's call ids), or a
        `FAILURE` (`AUTHENTICATION_FAILED`, `QUOTA_EXCEEDED`, `VALIDATION_ERROR`, `MODEL_ERROR`,
        or the demo rules' own); `metadata` names the framework and model, with `usage`,
        `reasked` and `failed_models` when known.

    Raises:
        ApplicationError: `ModelUnavailable` (retryable) when every model failed and at least
            one failure was transient.
    """
    spec = step.agent or DEFAULT_SPEC
    allowed = declared_tools(spec.tools if step.agent else step.tools, tools)

    async def attempt(name: str) -> AgentResult:
        client, key = model_client(spec, name)
        try:
            return await _step(step, spec, client, allowed)
        except DemoModelFailure as err:
            return model_failure(err.details, thought=err.thought)
        except ENDPOINT_ERRORS as err:
            raise ModelFailed.of(err, model=name, secrets=[key]) from err
        finally:
            await client.close()

    return await across_models(spec, "autogen", attempt)
