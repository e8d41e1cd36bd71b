"""What a `sql` result says, in a sentence (and a compact table) people read in chat. Pure."""

from __future__ import annotations

from typing import Any

from ..plugin import cut

_MAX_TABLE_ROWS = 10
_MAX_CELL_CHARS = 40


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
