"""Turns a tool message (a tool result or a denial) into a short sentence people read in chat.

The workflow puts one `UniversalMessage(role="tool", name=<tool_id>, content=...)` in the
conversation after a tool call; `content` is either `ToolResult.model_dump(mode="json")` or a
`ToolDenial`'s content. Pure functions, no I/O.
"""

from __future__ import annotations

import json
from typing import Any

from contracts import ToolDenial, UniversalMessage

from .plugin import cut
from .registry import tool_class

_MAX_TEXT_CHARS = 1500


def describe_result(tool_id: str | None, content: Any) -> str | None:
    """What the tool's own plugin says about a successful result (None when it says nothing)."""
    tool = tool_class(tool_id) if tool_id else None
    return tool.describe(content) if tool is not None else None


def describe_denial(tool_id: str, denial: ToolDenial) -> str:
    """`I did not run sql: denied by alice — "not now".`"""
    decided_by = denial.decided_by
    text = f"I did not run {tool_id}: " + (f"denied by {decided_by}" if decided_by else "denied")
    if denial.reason:
        text += f" ({denial.reason})"
    if denial.message:
        text += f' — "{denial.message}"'
    return text + "."


def describe_tool_message(message: UniversalMessage) -> str:
    """One human sentence (plus a compact table for rows) describing a tool message.

    Args:
        message: A `role="tool"` message whose `name` is the tool id.

    Returns:
        E.g. `DELETE done: 3 rows affected.`, `sql failed: no such table: foo (...)` or
        `I did not run sql: denied by alice — "not now".`
    """
    content = message.content
    tool_id = message.name or (content.get("tool_id") if isinstance(content, dict) else None) or "the tool"
    if not isinstance(content, dict):
        return f"{tool_id} returned: {cut(str(content), _MAX_TEXT_CHARS)}"
    edit = content.get("edited")
    if isinstance(edit, dict):
        rest = {key: value for key, value in content.items() if key != "edited"}
        was = json.dumps(edit.get("original_arguments"), ensure_ascii=False, default=str)
        said = describe_tool_message(message.model_copy(update={"content": rest}))
        return f"{edit.get('edited_by') or 'The approver'} edited my {tool_id} call before it ran (I proposed {cut(was, 300)}). {said}"
    denial = ToolDenial.of(content)
    if denial is not None:
        return describe_denial(tool_id, denial)
    if content.get("ok") is False:
        return f"{tool_id} failed: {content.get('error') or 'no error message was given'}"
    result = content.get("content")
    described = describe_result(tool_id, result)
    if described is not None:
        return described
    if isinstance(result, str):
        return f"{tool_id} finished:\n{cut(result, _MAX_TEXT_CHARS)}"
    return f"{tool_id} finished: {cut(json.dumps(result, default=str), _MAX_TEXT_CHARS)}"
