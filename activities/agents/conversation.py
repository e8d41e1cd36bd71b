"""The workflow's conversation as chat-completions turns, for any framework's message classes.

The workflow's history is the only state of an agent: every step rebuilds the model's
conversation from it. The workflow writes (workflows/agent/loop.py):

* `user` messages with text;
* an `assistant` message `{"tool_call": call}` for one proposed call, `{"tool_calls": [...]}`
  for a batch, `{"plan": blueprint}` for a plan, or the answer itself;
* one `tool` message per call (`name` = tool id, `content` = a `ToolResult` dump or a denial).

Chat-completions APIs require every assistant tool call to be answered by a tool message with
the call's id before the conversation goes on. So a tool message is matched to its call by
`tool_call_id` when that is the model's `call_id`, else to the oldest unanswered call of the
same tool (the workflow used to put the interaction id there); a call left unanswered (the
turn was cancelled) gets a "not run" result, and an orphan result gets its call back.

`turns` does that once for every framework; each adapter only maps the five kinds of `Turn`
to its own message classes (langgraph/messages.py, autogen/messages.py), and `universal` maps
turns back for the demo twins, which read the conversation as the demo rules do. Pure, no I/O.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

from contracts import ToolDenial, UniversalMessage

TASK_INPUT_PREFIX = "Task input (JSON): "
"""How a graph task's `input_data` is put before the conversation, as a user message."""
PLAN_PREFIX = "plan:"
"""An answer `plan: {json}` is a PlanBlueprint (the demo rules' chat syntax)."""
_NOT_RUN = {"ok": False, "error": "the call was not run (the turn ended before it was decided)"}


def json_text(value: Any) -> str:
    """A message content as text: strings as they are, anything else as JSON."""
    return value if isinstance(value, str) else json.dumps(value, default=str, ensure_ascii=False)


def parse_json(text: str) -> Any:
    """`text` as the JSON value it holds, else the text itself."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


@dataclass(frozen=True)
class Call:
    """One tool call the model proposed: its id, the tool's name, the arguments."""

    id: str
    name: str
    args: dict[str, Any]


@dataclass(frozen=True)
class Turn:
    """One chat-completions message.

    `system`, `user` and `assistant` carry `text`; `calls` carries the assistant's tool calls;
    `result` answers the call `call_id` of tool `name` with `text` (`failed`: an error, a denial).
    """

    kind: Literal["system", "user", "assistant", "calls", "result"]
    text: str = ""
    calls: list[Call] = field(default_factory=list)
    call_id: str = ""
    name: str = ""
    failed: bool = False


def _calls_of(content: Any) -> list[dict[str, Any]] | None:
    """The calls of an assistant tool-call message, or None when it is not one."""
    if not isinstance(content, dict):
        return None
    if isinstance(content.get("tool_call"), dict):
        return [content["tool_call"]]
    if isinstance(content.get("tool_calls"), list):
        return [call for call in content["tool_calls"] if isinstance(call, dict)]
    return None


def _failed(content: Any) -> bool:
    return ToolDenial.of(content) is not None or (isinstance(content, dict) and content.get("ok") is False)


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

    def close(self) -> list[Turn]:
        results = [
            Turn("result", json_text({"tool_id": tool, **_NOT_RUN}), call_id=cid, name=tool, failed=True)
            for cid, tool in self.calls
        ]
        self.calls = []
        return results


def turns(
    messages: list[UniversalMessage], *, instruction: str = "", input_data: dict[str, Any] | None = None
) -> list[Turn]:
    """The conversation as chat-completions turns, every tool call answered.

    Args:
        messages: The workflow's conversation, oldest first.
        instruction: The agent's system instruction (none when empty).
        input_data: A graph task's inputs, put first as a `TASK_INPUT_PREFIX` user turn.
    """
    out = [Turn("system", instruction)] if instruction else []
    if input_data is not None:
        out.append(Turn("user", TASK_INPUT_PREFIX + json_text(input_data)))
    pending = _Pending()
    for index, message in enumerate(messages):
        if message.role != "tool":
            out += pending.close()
        if message.role in ("system", "user"):
            out.append(Turn(message.role, json_text(message.content)))
        elif message.role == "assistant":
            out.append(_assistant(message.content, index, pending))
        else:
            name = message.name or "tool"
            call_id = pending.take(message.tool_call_id, message.name)
            if call_id is None:  # a result whose call is not in view: give it its call back
                call_id = message.tool_call_id or f"call_{index}"
                out.append(Turn("calls", calls=[Call(call_id, name, {})]))
            text = json_text(message.content)
            out.append(Turn("result", text, call_id=call_id, name=name, failed=_failed(message.content)))
    return out + pending.close()


def _assistant(content: Any, index: int, pending: _Pending) -> Turn:
    calls = _calls_of(content)
    if calls is None:
        if isinstance(content, dict) and isinstance(content.get("plan"), dict):
            return Turn("assistant", f"{PLAN_PREFIX} {json_text(content['plan'])}")
        return Turn("assistant", json_text(content))
    proposed = []
    for number, call in enumerate(calls):
        call_id = str(call.get("call_id") or f"call_{index}_{number}")
        name = str(call.get("tool_id") or "tool")
        arguments = call.get("arguments")
        proposed.append(Call(call_id, name, arguments if isinstance(arguments, dict) else {}))
        pending.calls.append((call_id, name))
    return Turn("calls", calls=proposed)


def universal(conversation: list[Turn]) -> tuple[list[UniversalMessage], dict[str, Any] | None]:
    """Turns back as the workflow's conversation, plus a task's `input_data`.

    The inverse of `turns` (system turns are dropped): what a model written for
    `UniversalMessage`s (the demo rules) needs to see.
    """
    out: list[UniversalMessage] = []
    input_data: dict[str, Any] | None = None
    for turn in conversation:
        if turn.kind == "user" and turn.text.startswith(TASK_INPUT_PREFIX):
            parsed = parse_json(turn.text[len(TASK_INPUT_PREFIX) :])
            input_data = parsed if isinstance(parsed, dict) else {"input": parsed}
        elif turn.kind in ("user", "assistant"):
            out.append(UniversalMessage(role=turn.kind, content=turn.text))
        elif turn.kind == "calls":
            calls = [{"tool_id": c.name, "arguments": c.args, "call_id": c.id or None} for c in turn.calls]
            content: Any = {"tool_call": calls[0]} if len(calls) == 1 else {"tool_calls": calls}
            out.append(UniversalMessage(role="assistant", content=content))
        elif turn.kind == "result":
            out.append(
                UniversalMessage(
                    role="tool",
                    name=turn.name or None,
                    tool_call_id=turn.call_id,
                    content=parse_json(turn.text),
                )
            )
    return out, input_data
