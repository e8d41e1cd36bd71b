"""Models for the ADK adapter: the offline demo rules, any OpenAI-compatible endpoint, or Gemini.

* `DemoAdkLlm` (`model = "demo"`) runs `activities.agents.demo` as an ADK `BaseLlm`: it rebuilds
  the conversation from the `LlmRequest` and answers with the same intents as `Agent:demo`, as
  a function call, a `plan: {json}` text or an answer, its reasoning in a thought part; a
  `FAILURE` becomes an `error_code` response.
* `OpenAICompatLlm` (`openai_compat`; any model of an agent with `base_url`) calls an
  OpenAI-compatible chat-completions endpoint.
* Any other name is handed to ADK as a Gemini model id (ADK reads `GOOGLE_API_KEY`).
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncGenerator
from dataclasses import dataclass
from typing import Any

from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.genai import types

from contracts import AgentSpec, AgentStepInput, FinalAnswer, PlanBlueprint, ToolCallRequest, UniversalMessage

from .. import demo
from ..model_errors import ModelConfigError, endpoint_api_key
from .openai_compat import NO_USAGE, OpenAICompatLlm, content_text, declared_functions

#: The user message that carries a graph task's `input_data` to the model (first in the conversation).
TASK_INPUT_PREFIX = "Task input (JSON):\n"
_NO_TOOLS = ["(no tools declared)"]


def request_to_step(request: LlmRequest) -> AgentStepInput:
    """The `AgentStepInput` a request stands for: its contents as messages, task input, tools."""
    messages: list[UniversalMessage] = []
    input_data: dict[str, Any] | None = None
    for content in request.contents:
        text = content_text(content)
        if content.role == "model":
            for part in content.parts or []:
                if part.function_call:
                    call = ToolCallRequest(
                        tool_id=part.function_call.name or "",
                        arguments=dict(part.function_call.args or {}),
                        call_id=part.function_call.id,
                    )
                    messages.append(
                        UniversalMessage(role="assistant", content={"tool_call": call.model_dump()})
                    )
            if text:
                messages.append(UniversalMessage(role="assistant", content=text))
            continue
        for part in content.parts or []:
            if part.function_response:
                response = part.function_response
                messages.append(
                    UniversalMessage(
                        role="tool", name=response.name, tool_call_id=response.id, content=response.response
                    )
                )
        if text.startswith(TASK_INPUT_PREFIX):
            input_data = json.loads(text[len(TASK_INPUT_PREFIX) :])
        elif text:
            messages.append(UniversalMessage(role="user", content=text))
    tools = [declaration.name for declaration in declared_functions(request) if declaration.name]
    return AgentStepInput(
        agent_id="Agent:demo-adk",
        owner_id="adk",
        messages=messages,
        tools=tools or _NO_TOOLS,
        input_data=input_data,
    )


class DemoAdkLlm(BaseLlm):
    """`Agent:demo`'s rules as an ADK model: offline, deterministic, the ADK test fixture."""

    model: str = "demo"

    @classmethod
    def supported_models(cls) -> list[str]:
        """Only `demo`."""
        return ["demo"]

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        """Answer one turn with the demo rules (a `FAILURE` becomes an `error_code` response)."""
        step = request_to_step(llm_request)
        result = demo.decide(step)
        thought = types.Part(text=result.output.thought, thought=True)
        intent = result.output.intent
        if result.status == "FAILURE" and result.failure_details:
            details = result.failure_details
            yield LlmResponse(error_code=details.type, error_message=details.message, usage_metadata=NO_USAGE)
            return
        if isinstance(intent, ToolCallRequest):
            calls = sum(1 for m in step.messages if m.role == "assistant" and isinstance(m.content, dict))
            call = types.FunctionCall(id=f"call_{calls + 1}", name=intent.tool_id, args=intent.arguments)
            parts = [thought, types.Part(function_call=call)]
        elif isinstance(intent, PlanBlueprint):
            parts = [thought, types.Part(text="plan: " + intent.model_dump_json(exclude_defaults=True))]
        else:
            content = intent.content if isinstance(intent, FinalAnswer) else None
            parts = [thought, types.Part(text=content if isinstance(content, str) else json.dumps(content))]
        yield LlmResponse(content=types.Content(role="model", parts=parts), usage_metadata=NO_USAGE)


@dataclass(frozen=True)
class ModelChoice:
    """The model for one attempt: an ADK model object or a Gemini id, and secrets to redact."""

    llm: BaseLlm | str
    secrets: tuple[str, ...] = ()


def select_model(name: str, spec: AgentSpec) -> ModelChoice:
    """The ADK model for `name`: `demo`, a model at `spec.base_url`, or a Gemini id.

    Raises:
        ModelConfigError: `spec.api_key_env` names an env var that is not set.
    """
    if name == "demo":
        return ModelChoice(DemoAdkLlm())
    if spec.base_url:
        key = endpoint_api_key(spec)
        llm = OpenAICompatLlm(model=name, base_url=spec.base_url)
        llm._api_key = key
        return ModelChoice(llm, (key,))
    google_key = os.environ.get("GOOGLE_API_KEY", "")
    if not google_key and not os.environ.get("GOOGLE_GENAI_USE_VERTEXAI"):
        raise ModelConfigError(
            f"model {name!r} is a Gemini model (no base_url is set for agent {spec.name!r}), "
            "but GOOGLE_API_KEY is not set on the worker",
            "AUTHENTICATION_FAILED",
        )
    return ModelChoice(name, (google_key,))
