"""A session's conversation as AG-UI messages: what `MESSAGES_SNAPSHOT` and `GET /ag-ui/{threadId}/state`
give a frontend that reconnects.

A snapshot replaces the client's messages, so ids are stable: a user message an AG-UI client sent
keeps the client's id (the session keeps `agui:<id>` as the message's id); any other message's id is
its time and role (`<time>-<role>-<n>`), the same on every read.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from ag_ui.core import AssistantMessage, Message, SystemMessage, ToolMessage, UserMessage

from contracts import UniversalMessage

MESSAGE_ID_PREFIX = "agui:"
"""The session's id of a message an AG-UI client sent is this and the client's id."""


def _text(content: Any) -> str:
    return content if isinstance(content, str) else json.dumps(content)


def agui_messages(messages: list[UniversalMessage]) -> list[Message]:
    """The conversation as AG-UI messages, in order."""
    seen: Counter[str] = Counter()
    out: list[Message] = []
    for message in messages:
        stamp = f"{message.timestamp:%Y%m%dT%H%M%S%f}" if message.timestamp else "0"
        base = f"{stamp}-{message.role}"
        seen[base] += 1
        own = message.metadata.get("message_id")
        mid = f"{base}-{seen[base]}"
        if message.role == "user":
            if isinstance(own, str) and own.startswith(MESSAGE_ID_PREFIX):
                mid = own.removeprefix(MESSAGE_ID_PREFIX)
            out.append(UserMessage(id=mid, content=_text(message.content), name=message.name))
        elif message.role == "assistant":
            out.append(AssistantMessage(id=mid, content=_text(message.content)))
        elif message.role == "tool":
            out.append(
                ToolMessage(id=mid, content=_text(message.content), tool_call_id=message.tool_call_id or mid)
            )
        else:
            out.append(SystemMessage(id=mid, content=_text(message.content)))
    return out
