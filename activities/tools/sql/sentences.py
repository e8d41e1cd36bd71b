"""What a `sql` result says, in a sentence (and a compact table) people read in chat. Pure."""

from __future__ import annotations

from typing import Any

from contracts import ArtifactRef

from ...artifacts.offload import json_size
from ..plugin import cut

_MAX_TABLE_ROWS = 10
_MAX_CELL_CHARS = 40
PREVIEW_CELL_CHARS = 200
"""A cell of a previewed result is cut to this many characters."""


def _cell(value: Any) -> str:
    if value is None:
        return "NULL"
    return cut(str(value), _MAX_CELL_CHARS)


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def compact_table(columns: list[Any], rows: list[list[Any]]) -> str:
    """Rows as `a | b` lines under a header, at most ten of them."""
    lines = [" | ".join(_cell(column) for column in columns)]
    lines += [" | ".join(_cell(value) for value in row) for row in rows[:_MAX_TABLE_ROWS]]
    if len(rows) > _MAX_TABLE_ROWS:
        lines.append(f"… and {len(rows) - _MAX_TABLE_ROWS} more")
    return "\n".join(lines)


def sql_said(content: dict[str, Any]) -> str | None:
    """`3 rows` a statement selected, or `1 row affected` by one that changed data."""
    if content.get("columns"):
        return _plural(len(content.get("rows") or []), "row")
    rowcount = content.get("rowcount")
    return f"{_plural(rowcount, 'row')} affected" if isinstance(rowcount, int) else None


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


def sql_preview(content: dict[str, Any], budget: int, ref: ArtifactRef) -> dict[str, Any]:
    """The result with as many leading rows (cells cut) as fit in about `budget` bytes, and a note."""
    kept: list[list[Any]] = []
    used = json_size({key: value for key, value in content.items() if key != "rows"}) + 300
    for row in content.get("rows") or []:
        cells = [cut(value, PREVIEW_CELL_CHARS) if isinstance(value, str) else value for value in row]
        size = json_size(cells) + 1
        if used + size > budget:
            break
        kept.append(cells)
        used += size
    rowcount = content.get("rowcount")
    total = rowcount if isinstance(rowcount, int) else len(content.get("rows") or [])
    note = (
        f"showing the first {len(kept)} of {_plural(total, 'row')}; the whole result "
        f"({ref.size_bytes:,} bytes) is artifact {ref.artifact_id}"
    )
    return {**content, "rows": kept, "truncated": True, "note": note}
