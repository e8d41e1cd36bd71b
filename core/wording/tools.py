"""A tool's call and result in words: `→ DELETE FROM orders (in /srv)`, `← sql ok: 3 rows`.

A result's own tool may describe it better (`described`: its plugin's sentence, which the chat
channels pass in); without it, rows and exit statuses are counted here.
"""

from __future__ import annotations

import json

from contracts import ToolCalled, ToolResult, ToolUsed
from core.visible import visible

LINE_LIMIT = 300
"""Characters of one line of a card (a reason, a comment, a result)."""


def cut(text: str, limit: int) -> str:
    """`text`, shortened to `limit` characters with an ellipsis when longer."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def called_text(event: ToolCalled) -> str:
    """`→ summary  (in cwd)`, non-printing characters escaped (`core.visible`)."""
    cwd = event.context.cwd
    where = f"  (in {cwd})" if cwd else ""
    return visible(f"→ {event.summary or event.tool_name}{where}")


def result_said(result: ToolResult, described: str | None = None) -> str | None:
    """What a successful result amounts to, on one line: its tool's words (first line), rows
    selected or affected, an exit status; None when nothing short says it."""
    if described is not None:
        return described.splitlines()[0].rstrip(":") if described else None
    body = result.content
    if isinstance(body, dict) and "rowcount" in body:
        selected = bool(body.get("columns"))
        count = len(body.get("rows") or []) if selected else body["rowcount"]
        return f"{count} row{'' if count == 1 else 's'}" + ("" if selected else " affected")
    if isinstance(body, dict) and "exit_status" in body:
        return f"exit status {body['exit_status']}"
    return None


def used_text(event: ToolUsed) -> str:
    """`← sql ok: 3 rows`, or `✗ sql failed: why`."""
    result = event.result
    if not result.ok:
        return f"✗ {event.tool_name} failed: {result.error}"
    said = result_said(result)
    return f"← {event.tool_name} ok" + (f": {said}" if said else "")


def result_line(result: ToolResult | None, described: str | None = None) -> str | None:
    """One line about what an approved tool did, for a card: how it failed, what it amounts to, or
    its content cut short (None: no result)."""
    if result is None:
        return None
    if not result.ok:
        return f"failed: {cut(result.error or 'no error message', LINE_LIMIT)}"
    said = result_said(result, described)
    if said is not None:
        return said
    if result.content is None:
        return "done"
    content = result.content
    text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False, default=str)
    return cut(" ".join(text.split()), LINE_LIMIT)
