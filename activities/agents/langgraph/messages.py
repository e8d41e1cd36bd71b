"""The workflow's conversation as LangChain messages, and back.

Which call a tool result answers, and what an unanswered call or an orphan result becomes, is
decided once for every framework in `agents/conversation.py`; this maps its turns to LangChain's
message classes. Pure functions, no I/O.
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from contracts import UniversalMessage

from ..conversation import Call, Turn, turns, universal


def lc_call(call: Call) -> Any:
    return {"id": call.id, "name": call.name, "args": call.args, "type": "tool_call"}


def _langchain(turn: Turn) -> BaseMessage:
    if turn.kind == "system":
        return SystemMessage(content=turn.text)
    if turn.kind == "user":
        return HumanMessage(content=turn.text)
    if turn.kind == "assistant":
        return AIMessage(content=turn.text)
    if turn.kind == "calls":
        return AIMessage(content="", tool_calls=[lc_call(call) for call in turn.calls])
    status = "error" if turn.failed else "success"
    return ToolMessage(content=turn.text, tool_call_id=turn.call_id, name=turn.name, status=status)


def to_langchain(
    messages: list[UniversalMessage], *, instruction: str = "", input_data: dict[str, Any] | None = None
) -> list[BaseMessage]:
    """The conversation as LangChain messages, ready for a chat model (see `conversation.turns`)."""
    return [_langchain(turn) for turn in turns(messages, instruction=instruction, input_data=input_data)]


def _turn(message: BaseMessage) -> Turn | None:
    if isinstance(message, HumanMessage):
        return Turn("user", message.text)
    if isinstance(message, AIMessage):
        if message.tool_calls:
            calls = [Call(call.get("id") or "", call["name"], call["args"]) for call in message.tool_calls]
            return Turn("calls", calls=calls)
        return Turn("assistant", message.text)
    if isinstance(message, ToolMessage):
        return Turn("result", message.text, call_id=message.tool_call_id, name=message.name or "")
    return None


def langchain_turns(messages: list[BaseMessage]) -> list[Turn]:
    """LangChain messages as turns (system messages are dropped)."""
    return [turn for message in messages if (turn := _turn(message)) is not None]


def from_langchain(messages: list[BaseMessage]) -> tuple[list[UniversalMessage], dict[str, Any] | None]:
    """LangChain messages back as the workflow's conversation, plus a task's `input_data`: the
    inverse of `to_langchain`, what a model written for `UniversalMessage`s needs to see."""
    return universal(langchain_turns(messages))
