"""The workflow's conversation (`UniversalMessage`s) as LangChain messages, and back.

The workflow's history is the only state of a LangChain/LangGraph agent: every step rebuilds
the model's conversation from it. The workflow writes (workflows/agent/loop.py):

* `user` messages with text;
* an `assistant` message `{"tool_call": call}` for one proposed call, `{"tool_calls": [...]}`
  for a batch, `{"plan": blueprint}` for a plan, or the answer itself;
* one `tool` message per call (`name` = tool id, `content` = a `ToolResult` dump or a denial).

Chat-completions APIs require every assistant tool call to be answered by a tool message with
the call's id before the conversation goes on. So a tool message is matched to its call by
`tool_call_id` when that is the model's `call_id`, else to the oldest unanswered call of the
same tool (the workflow used to put the interaction id there); a call left unanswered (the
turn was cancelled) gets a "not run" result, and an orphan result gets its call back.
Pure functions, no I/O.
"""

from __future__ import annotations

import json
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from contracts import ToolDenial, UniversalMessage

TASK_INPUT_PREFIX = "Task input (JSON): "
"""How a graph task's `input_data` is put before the conversation, as a user message."""
PLAN_PREFIX = "plan:"
"""An answer `plan: {json}` is a PlanBlueprint (the demo rules' chat syntax)."""
_NOT_RUN = {"ok": False, "error": "the call was not run (the turn ended before it was decided)"}


def json_text(value: Any) -> str:
    """A message content as text: strings as they are, anything else as JSON."""
    return value if isinstance(value, str) else json.dumps(value, default=str, ensure_ascii=False)


def _calls_of(content: Any) -> list[dict[str, Any]] | None:
    """The calls of an assistant tool-call message, or None when it is not one."""
    if not isinstance(content, dict):
        return None
    if isinstance(content.get("tool_call"), dict):
        return [content["tool_call"]]
    if isinstance(content.get("tool_calls"), list):
        return [call for call in content["tool_calls"] if isinstance(call, dict)]
    return None


def _tool_status(content: Any) -> str:
    failed = ToolDenial.of(content) is not None or (isinstance(content, dict) and content.get("ok") is False)
    return "error" if failed else "success"


class _Pending:
    """Calls of the latest assistant turn still waiting for their results."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []  # (call id, tool name)

    def take(self, tool_call_id: str | None, name: str | None) -> str | None:
        """The id of the call a result answers: same id, else oldest of the same tool, else oldest."""
        if not self.calls:
            return None
        by_tool = next((i for i, (_, tool) in enumerate(self.calls) if tool == name), 0)
        index = next((i for i, (cid, _) in enumerate(self.calls) if cid == tool_call_id), by_tool)
        return self.calls.pop(index)[0]

    def close(self) -> list[BaseMessage]:
        results: list[BaseMessage] = [
            ToolMessage(
                content=json_text({"tool_id": tool, **_NOT_RUN}), tool_call_id=cid, name=tool, status="error"
            )
            for cid, tool in self.calls
        ]
        self.calls = []
        return results


def to_langchain(
    messages: list[UniversalMessage], *, instruction: str = "", input_data: dict[str, Any] | None = None
) -> list[BaseMessage]:
    """The conversation as LangChain messages, ready for a chat model.

    Args:
        messages: The workflow's conversation, oldest first.
        instruction: The agent's system instruction (none when empty).
        input_data: A graph task's inputs, put first as a `TASK_INPUT_PREFIX` user message.

    Returns:
        System instruction, task input, then the conversation; every tool call answered.
    """
    out: list[BaseMessage] = [SystemMessage(content=instruction)] if instruction else []
    if input_data is not None:
        out.append(HumanMessage(content=TASK_INPUT_PREFIX + json_text(input_data)))
    pending = _Pending()
    for index, message in enumerate(messages):
        if message.role != "tool":
            out += pending.close()
        if message.role == "system":
            out.append(SystemMessage(content=json_text(message.content)))
        elif message.role == "user":
            out.append(HumanMessage(content=json_text(message.content)))
        elif message.role == "assistant":
            out.append(_assistant(message.content, index, pending))
        else:
            call_id = pending.take(message.tool_call_id, message.name)
            if call_id is None:  # a result whose call is not in view: give it its call back
                call_id = message.tool_call_id or f"call_{index}"
                out.append(AIMessage(content="", tool_calls=[_lc_call(call_id, message.name or "tool", {})]))
            out.append(
                ToolMessage(
                    content=json_text(message.content),
                    tool_call_id=call_id,
                    name=message.name,
                    status=_tool_status(message.content),
                )
            )
    return out + pending.close()


def _lc_call(call_id: str, name: str, args: dict[str, Any]) -> Any:
    return {"id": call_id, "name": name, "args": args, "type": "tool_call"}


def _assistant(content: Any, index: int, pending: _Pending) -> AIMessage:
    calls = _calls_of(content)
    if calls is None:
        if isinstance(content, dict) and isinstance(content.get("plan"), dict):
            return AIMessage(content=f"{PLAN_PREFIX} {json_text(content['plan'])}")
        return AIMessage(content=json_text(content))
    lc_calls = []
    for number, call in enumerate(calls):
        call_id = str(call.get("call_id") or f"call_{index}_{number}")
        name = str(call.get("tool_id") or "tool")
        arguments = call.get("arguments")
        lc_calls.append(_lc_call(call_id, name, arguments if isinstance(arguments, dict) else {}))
        pending.calls.append((call_id, name))
    return AIMessage(content="", tool_calls=lc_calls)


def _parse_json(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def from_langchain(messages: list[BaseMessage]) -> tuple[list[UniversalMessage], dict[str, Any] | None]:
    """LangChain messages back as the workflow's conversation, plus a task's `input_data`.

    The inverse of `to_langchain` (system messages are dropped): what a model written for
    `UniversalMessage`s (the demo rules) needs to see.
    """
    out: list[UniversalMessage] = []
    input_data: dict[str, Any] | None = None
    for message in messages:
        if isinstance(message, HumanMessage):
            text = message.text
            if text.startswith(TASK_INPUT_PREFIX):
                parsed = _parse_json(text[len(TASK_INPUT_PREFIX) :])
                input_data = parsed if isinstance(parsed, dict) else {"input": parsed}
            else:
                out.append(UniversalMessage(role="user", content=text))
        elif isinstance(message, AIMessage):
            calls = [
                {"tool_id": call["name"], "arguments": call["args"], "call_id": call.get("id")}
                for call in message.tool_calls
            ]
            if calls:
                content: Any = {"tool_call": calls[0]} if len(calls) == 1 else {"tool_calls": calls}
            else:
                content = message.text
            out.append(UniversalMessage(role="assistant", content=content))
        elif isinstance(message, ToolMessage):
            out.append(
                UniversalMessage(
                    role="tool",
                    name=message.name,
                    tool_call_id=message.tool_call_id,
                    content=_parse_json(message.text),
                )
            )
    return out, input_data
