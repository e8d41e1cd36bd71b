"""ADK model for any OpenAI-compatible chat-completions endpoint (vLLM, Ollama, OpenAI, ...).

`OpenAICompatLlm` calls `/chat/completions` through the `openai` SDK: ADK contents and tool
declarations become chat messages and `tools`; the reply's text and `tool_calls` become an
`LlmResponse`. We do not use ADK's LiteLLM wrapper: one SDK we already depend on instead of
litellm and its dependency tree, explicit control of retries (off: the Temporal retry policy
owns backoff) and of secrets in errors, and it is exercised in tests against the loopback
stand-in (tests/fakes/chat_completions.py).

A failed call does not raise: the exception is kept in `last_error` and the response carries
`error_code=CALL_FAILED`, so the adapter classifies it (model_errors) without ADK logging a
traceback for every rate limit. Tool-call arguments that are not a JSON object are listed in
`custom_metadata[MALFORMED_ARGUMENTS]`, so the adapter can ask the model to correct them.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator
from typing import Any

import openai
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.genai import types
from pydantic import PrivateAttr

from ..model_errors import describe_model_error

#: `LlmResponse.custom_metadata` key: `{call_id: error}` for tool calls whose arguments were not JSON.
MALFORMED_ARGUMENTS = "malformed_arguments"
#: `error_code` of a response whose call raised (the exception is in the model's `last_error`).
CALL_FAILED = "MODEL_CALL_FAILED"
DEFAULT_TIMEOUT_SECONDS = 120.0
#: Reported when a model spent nothing (demo) or failed, so ADK's metrics do not warn.
NO_USAGE = types.GenerateContentResponseUsageMetadata(
    prompt_token_count=0, candidates_token_count=0, total_token_count=0
)


def declared_functions(request: LlmRequest) -> list[types.FunctionDeclaration]:
    """The function declarations of the request's tools (what the model may call)."""
    return [
        declaration
        for tool in request.config.tools or []
        if isinstance(tool, types.Tool)
        for declaration in tool.function_declarations or []
    ]


def content_text(content: types.Content) -> str:
    """The content's text, without thought parts."""
    return "".join(part.text for part in content.parts or [] if part.text and not part.thought)


def _chat_messages(request: LlmRequest) -> list[dict[str, Any]]:
    """ADK contents as chat-completions messages (thought parts are not sent back)."""
    messages: list[dict[str, Any]] = []
    system = request.config.system_instruction
    if isinstance(system, str) and system.strip():
        messages.append({"role": "system", "content": system})
    for content in request.contents:
        parts = content.parts or []
        text = content_text(content)
        if content.role == "model":
            calls = [
                {
                    "id": part.function_call.id,
                    "type": "function",
                    "function": {
                        "name": part.function_call.name,
                        "arguments": json.dumps(part.function_call.args or {}),
                    },
                }
                for part in parts
                if part.function_call
            ]
            if not (text or calls):
                continue  # e.g. only thoughts: providers reject an empty assistant message
            message: dict[str, Any] = {"role": "assistant", "content": text or None}
            if calls:
                message["tool_calls"] = calls
            messages.append(message)
            continue
        for part in parts:
            if part.function_response:
                response = part.function_response
                messages.append(
                    {
                        "role": "tool",
                        "tool_call_id": response.id,
                        "content": json.dumps(response.response, default=str),
                    }
                )
        if text:
            messages.append({"role": "user", "content": text})
    return messages


def _chat_tools(request: LlmRequest) -> list[dict[str, Any]]:
    tools = []
    for declaration in declared_functions(request):
        schema = declaration.parameters_json_schema
        if schema is None and declaration.parameters is not None:
            schema = declaration.parameters.json_schema.model_dump(mode="json", exclude_none=True)
        function = {"name": declaration.name, "description": declaration.description or ""}
        tools.append(
            {"type": "function", "function": {**function, "parameters": schema or {"type": "object"}}}
        )
    return tools


def _llm_response(completion: Any) -> LlmResponse:
    """A chat completion as an `LlmResponse` (malformed call arguments noted in custom_metadata)."""
    if not completion.choices:
        return LlmResponse(
            error_code="EMPTY_RESPONSE",
            error_message="the endpoint returned no choices",
            usage_metadata=NO_USAGE,
        )
    choice = completion.choices[0]
    message = choice.message
    parts: list[types.Part] = []
    reasoning = (message.model_extra or {}).get("reasoning_content")
    if isinstance(reasoning, str) and reasoning.strip():
        parts.append(types.Part(text=reasoning, thought=True))
    if message.content:
        parts.append(types.Part(text=message.content))
    malformed: dict[str, str] = {}
    for call in message.tool_calls or []:
        function = getattr(call, "function", None)
        if function is None:
            continue
        try:
            args = json.loads(function.arguments or "{}")
        except json.JSONDecodeError as err:
            args, malformed[call.id] = (
                {},
                f"the arguments are not valid JSON ({err.msg} at column {err.colno})",
            )
        if not isinstance(args, dict):
            args, malformed[call.id] = {}, "the arguments must be a JSON object"
        parts.append(types.Part(function_call=types.FunctionCall(id=call.id, name=function.name, args=args)))
    if choice.finish_reason == "content_filter" and not parts:
        return LlmResponse(
            error_code="SAFETY",
            error_message="the endpoint's content filter withheld the answer",
            usage_metadata=NO_USAGE,
        )
    usage = completion.usage
    return LlmResponse(
        content=types.Content(role="model", parts=parts),
        model_version=completion.model,
        custom_metadata={MALFORMED_ARGUMENTS: malformed} if malformed else None,
        usage_metadata=types.GenerateContentResponseUsageMetadata(
            prompt_token_count=usage.prompt_tokens,
            candidates_token_count=usage.completion_tokens,
            total_token_count=usage.total_tokens,
        )
        if usage
        else None,
    )


class OpenAICompatLlm(BaseLlm):
    """An ADK model backed by any OpenAI-compatible `/chat/completions` endpoint.

    The SDK's own retries are off (`max_retries=0`): a transient failure fails the step and
    Temporal retries it with the workflow's backoff. The key is a private attribute, so it is
    never part of the model's repr or dump.
    """

    base_url: str
    timeout: float = DEFAULT_TIMEOUT_SECONDS
    _api_key: str = PrivateAttr(default="EMPTY")
    _last_error: BaseException | None = PrivateAttr(default=None)

    @property
    def last_error(self) -> BaseException | None:
        """The exception of the last failed call (its response carried `error_code=CALL_FAILED`)."""
        return self._last_error

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        """One chat completion for the request; tools are declared, never run."""
        body: dict[str, Any] = {"model": self.model, "messages": _chat_messages(llm_request)}
        tools = _chat_tools(llm_request)
        if tools:
            body["tools"] = tools
        config = llm_request.config
        if config.temperature is not None:
            body["temperature"] = config.temperature
        if config.max_output_tokens is not None:
            body["max_tokens"] = config.max_output_tokens
        try:
            async with openai.AsyncOpenAI(
                base_url=self.base_url, api_key=self._api_key, max_retries=0, timeout=self.timeout
            ) as client:
                completion = await client.chat.completions.create(**body)
        except openai.OpenAIError as err:
            self._last_error = err
            message = describe_model_error(err, model=self.model, secrets=[self._api_key])
            yield LlmResponse(error_code=CALL_FAILED, error_message=message, usage_metadata=NO_USAGE)
            return
        yield _llm_response(completion)
