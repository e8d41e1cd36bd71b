"""The workflow's conversation as AutoGen `LLMMessage`s, and back.

Which call a tool result answers is decided in `agents/conversation.py` for every framework;
this maps its turns to autogen-core's message classes. Consecutive results are one
`FunctionExecutionResultMessage`, as AutoGen writes them. Pure functions, no I/O.
"""

from __future__ import annotations

import json
from typing import Any

from autogen_core import FunctionCall
from autogen_core.models import (
    AssistantMessage,
    FunctionExecutionResult,
    FunctionExecutionResultMessage,
    LLMMessage,
    SystemMessage,
    UserMessage,
)

from ..conversation import Call, Turn, parse_json

SOURCE = "user"
"""The `source` AutoGen messages from people carry."""


def function_call(call: Call) -> FunctionCall:
    """A proposed call as AutoGen's `FunctionCall` (its arguments are JSON text)."""
    return FunctionCall(id=call.id, name=call.name, arguments=json.dumps(call.args, ensure_ascii=False))


def autogen_messages(conversation: list[Turn], agent: str) -> list[LLMMessage]:
    """`conversation` as AutoGen messages; the assistant's turns carry `agent` as their source."""
    out: list[LLMMessage] = []
    for turn in conversation:
        if turn.kind == "system":
            out.append(SystemMessage(content=turn.text))
        elif turn.kind == "user":
            out.append(UserMessage(content=turn.text, source=SOURCE))
        elif turn.kind == "assistant":
            out.append(AssistantMessage(content=turn.text, source=agent))
        elif turn.kind == "calls":
            out.append(AssistantMessage(content=[function_call(call) for call in turn.calls], source=agent))
        else:
            result = FunctionExecutionResult(
                content=turn.text, name=turn.name, call_id=turn.call_id, is_error=turn.failed
            )
            last = out[-1] if out else None
            if isinstance(last, FunctionExecutionResultMessage):
                last.content.append(result)
            else:
                out.append(FunctionExecutionResultMessage(content=[result]))
    return out


def arguments(call: FunctionCall) -> Any:
    """A call's arguments as the JSON value they hold (the text itself when they are not JSON)."""
    return parse_json(call.arguments)


def autogen_turns(messages: list[LLMMessage]) -> list[Turn]:
    """AutoGen messages as turns (system messages are dropped): what the demo twin reads."""
    out: list[Turn] = []
    for message in messages:
        if isinstance(message, UserMessage):
            out.append(Turn("user", message.content if isinstance(message.content, str) else ""))
        elif isinstance(message, AssistantMessage):
            if isinstance(message.content, str):
                out.append(Turn("assistant", message.content))
            else:
                calls = [
                    Call(c.id, c.name, a if isinstance(a := arguments(c), dict) else {})
                    for c in message.content
                ]
                out.append(Turn("calls", calls=calls))
        elif isinstance(message, FunctionExecutionResultMessage):
            out += [
                Turn("result", r.content, call_id=r.call_id, name=r.name, failed=bool(r.is_error))
                for r in message.content
            ]
    return out
