"""The builtin tools, as declared to models and to the approval policy (seed 003 ToolDescriptor).

Changing a descriptor (e.g. its approval policy) changes how new tool calls are assessed;
calls already assessed keep their recorded assessment.
"""

from __future__ import annotations

from contracts import ToolDescriptor

SQL_TOOL = ToolDescriptor(
    name="sql",
    description=(
        "Run one SQL statement against the demo database (SQLite by default, with an `orders` "
        "table: id, customer, amount, status). SELECT runs freely; INSERT, UPDATE, DELETE and "
        "schema changes need a person's approval."
    ),
    arguments_schema={
        "type": "object",
        "properties": {"sql": {"type": "string", "description": "One SQL statement."}},
        "required": ["sql"],
    },
    permissions=["read", "write"],
    source="builtin",
    # One statement on a local database takes ~2 ms: `quick` makes the workflow run it as a
    # local activity, which saves the activity task round trip on the approval path.
    capabilities=["quick"],
    approval="destructive",
)


def builtin_tools() -> dict[str, ToolDescriptor]:
    """The builtin tools by name (a fresh dict; callers may add to it)."""
    return {SQL_TOOL.name: SQL_TOOL}
