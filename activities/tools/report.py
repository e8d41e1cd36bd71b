"""Turns a tool message (a tool result or a denial) into a short sentence people read in chat.

The workflow puts one `UniversalMessage(role="tool", name=<tool_id>, content=...)` in the
conversation after a tool call; `content` is either `ToolResult.model_dump(mode="json")` or a
denial `{"denied": True, "decided_by", "message", "reason"}`. Pure functions, no I/O.
"""

from __future__ import annotations

import json
from typing import Any

from contracts import UniversalMessage

_MAX_TABLE_ROWS = 10
_MAX_CELL_CHARS = 40
_MAX_TEXT_CHARS = 1500


def _cut(value: str, limit: int) -> str:
    return value if len(value) <= limit else value[: limit - 1] + "…"


def _cell(value: Any) -> str:
    if value is None:
        return "NULL"
    return _cut(str(value), _MAX_CELL_CHARS)


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def compact_table(columns: list[Any], rows: list[list[Any]]) -> str:
    """Rows as `a | b` lines under a header, at most ten of them."""
    lines = [" | ".join(_cell(column) for column in columns)]
    lines += [" | ".join(_cell(value) for value in row) for row in rows[:_MAX_TABLE_ROWS]]
    if len(rows) > _MAX_TABLE_ROWS:
        lines.append(f"… and {len(rows) - _MAX_TABLE_ROWS} more")
    return "\n".join(lines)


def describe_sql_result(content: dict[str, Any]) -> str:
    """`SELECT returned 2 rows: ...` or `DELETE done: 3 rows affected.`"""
    statement = content.get("statement") or "SQL"
    columns = content.get("columns") or []
    rows = content.get("rows") or []
    rowcount = content.get("rowcount")
    if columns:
        total = rowcount if isinstance(rowcount, int) else len(rows)
        text = f"{statement} returned {_plural(total, 'row')}"
        text += ":\n" + compact_table(columns, rows) if rows else "."
        if content.get("note"):
            text += f"\n({content['note']})"
        return text
    if isinstance(rowcount, int):
        return f"{statement} done: {_plural(rowcount, 'row')} affected."
    return f"{statement} done."


def describe_denial(tool_id: str, denial: dict[str, Any]) -> str:
    """`I did not run sql: denied by alice — "not now".`"""
    decided_by = denial.get("decided_by")
    text = f"I did not run {tool_id}: " + (f"denied by {decided_by}" if decided_by else "denied")
    if denial.get("reason"):
        text += f" ({denial['reason']})"
    if denial.get("message"):
        text += f' — "{denial["message"]}"'
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
        return f"{tool_id} returned: {_cut(str(content), _MAX_TEXT_CHARS)}"
    if content.get("denied"):
        return describe_denial(tool_id, content)
    if content.get("ok") is False:
        return f"{tool_id} failed: {content.get('error') or 'no error message was given'}"
    result = content.get("content")
    if tool_id == "sql" and isinstance(result, dict):
        return describe_sql_result(result)
    if isinstance(result, str):
        return f"{tool_id} finished:\n{_cut(result, _MAX_TEXT_CHARS)}"
    return f"{tool_id} finished: {_cut(json.dumps(result, default=str), _MAX_TEXT_CHARS)}"
