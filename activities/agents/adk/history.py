"""The workflow's conversation (`UniversalMessage`s) as google-genai `Content`s for ADK.

What the workflow appends (workflows/agent/loop.py) and what it becomes here:

* `user` text → a user text part; `system` text → a user part marked `[system]` (ADK's
  instruction is the agent's own);
* `assistant` `{"tool_call": ToolCallRequest}` or `{"tool_calls": [...]}` → one model content
  with a function-call part per call, keeping the model's `call_id` (a call without one, from
  histories before call ids, gets `call_<n>`); `{"plan": {...}}` → `plan: {json}` text; other
  answers → text;
* `tool` (a `ToolResult` dump or a denial) → a function-response part answering the call whose
  id is the message's `tool_call_id`, else the oldest unanswered call of the same tool;
  consecutive tool messages share one user content, as parallel calls require.

A call left unanswered (e.g. the turn was cancelled) gets an error response, since providers
reject a function call without one. A graph task's `input_data` comes first, as a user message
`Task input (JSON): {...}`. Pure functions, no I/O.
"""

from __future__ import annotations

import json
from typing import Any

from google.genai import types

from contracts import UniversalMessage

from .models import TASK_INPUT_PREFIX

_UNANSWERED = {"error": "no result was recorded for this call; it did not run"}


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, default=str)


def _user(text: str) -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=text)])


def _calls(content: dict[str, Any], counter: int) -> list[types.FunctionCall]:
    raw = content.get("tool_calls") if "tool_calls" in content else [content.get("tool_call")]
    calls = []
    for index, call in enumerate(raw if isinstance(raw, list) else []):
        if not isinstance(call, dict):
            continue
        call_id = call.get("call_id") or f"call_{counter + index + 1}"
        arguments = call.get("arguments")
        calls.append(
            types.FunctionCall(
                id=call_id,
                name=str(call.get("tool_id") or "tool"),
                args=arguments if isinstance(arguments, dict) else {},
            )
        )
    return calls


class _Builder:
    """Accumulates contents, pairing tool messages with the calls they answer."""

    def __init__(self) -> None:
        self.contents: list[types.Content] = []
        self.pending: list[types.FunctionCall] = []
        self.responses: list[types.Part] = []
        self.calls_seen = 0

    def flush(self) -> None:
        """Close a run of tool messages; answer any call still open with an error."""
        for call in self.pending:
            self.responses.append(
                types.Part(
                    function_response=types.FunctionResponse(id=call.id, name=call.name, response=_UNANSWERED)
                )
            )
        self.pending = []
        if self.responses:
            self.contents.append(types.Content(role="user", parts=self.responses))
            self.responses = []

    def add_calls(self, calls: list[types.FunctionCall]) -> None:
        self.flush()
        self.contents.append(types.Content(role="model", parts=[types.Part(function_call=c) for c in calls]))
        self.pending = list(calls)
        self.calls_seen += len(calls)

    def add_tool(self, message: UniversalMessage) -> None:
        answered = next(
            (c for c in self.pending if message.tool_call_id and c.id == message.tool_call_id), None
        )
        answered = answered or next((c for c in self.pending if c.name == message.name), None)
        answered = answered or (self.pending[0] if self.pending else None)
        if answered is None:  # a result without its call: show the call first
            self.calls_seen += 1
            call_id = message.tool_call_id or f"call_{self.calls_seen}"
            answered = types.FunctionCall(id=call_id, name=message.name or "tool", args={})
            self.flush()
            self.contents.append(types.Content(role="model", parts=[types.Part(function_call=answered)]))
        else:
            self.pending.remove(answered)
        content = message.content if isinstance(message.content, dict) else {"result": message.content}
        response = types.FunctionResponse(id=answered.id, name=answered.name, response=content)
        self.responses.append(types.Part(function_response=response))

    def add(self, role: str, text: str) -> None:
        self.flush()
        self.contents.append(types.Content(role=role, parts=[types.Part(text=text)]))


def conversation_contents(
    messages: list[UniversalMessage], input_data: dict[str, Any] | None
) -> list[types.Content]:
    """The conversation as ADK contents, oldest first (never empty).

    Args:
        messages: The conversation the workflow passed to the step.
        input_data: A graph task's inputs, or None for a chat session.

    Returns:
        Contents alternating as providers expect; the last one is usually the user's message
        or the function responses the model is waiting for.
    """
    builder = _Builder()
    if input_data is not None:
        builder.add("user", TASK_INPUT_PREFIX + json.dumps(input_data, default=str))
    for message in messages:
        content = message.content
        if message.role == "tool":
            builder.add_tool(message)
        elif (
            message.role == "assistant"
            and isinstance(content, dict)
            and {"tool_call", "tool_calls"} & content.keys()
        ):
            builder.add_calls(_calls(content, builder.calls_seen))
        elif message.role == "assistant" and isinstance(content, dict) and "plan" in content:
            builder.add("model", "plan: " + json.dumps(content["plan"]))
        elif message.role == "assistant":
            builder.add("model", _text(content))
        elif message.role == "system":
            builder.add("user", f"[system] {_text(content)}")
        else:
            builder.add("user", _text(content))
    builder.flush()
    return builder.contents or [_user("(no message)")]
