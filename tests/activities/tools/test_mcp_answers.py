"""A person's text answer fitted to the schema an MCP server asked for."""

from __future__ import annotations

from typing import Any

import pytest

from activities.tools.mcp.elicit import fitted

NAME = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
AGE = {"type": "object", "properties": {"age": {"type": "integer"}}}
TWO = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "zip": {"type": "string"}},
    "required": ["city"],
}
OPEN = {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "number"}}}


@pytest.mark.parametrize(
    ("text", "schema", "content"),
    [
        ("Alice", NAME, {"name": "Alice"}),
        ("  Alice  ", NAME, {"name": "Alice"}),
        ('{"name": "Bob", "extra": 1}', NAME, {"name": "Bob"}),
        ("42", AGE, {"age": 42}),
        ("forty", AGE, None),
        ("Paris", TWO, {"city": "Paris"}),
        ("x", OPEN, None),
        ('{"a": "x", "b": 2.5}', OPEN, {"a": "x", "b": 2.5}),
        ("yes", {"properties": {"ok": {"type": "boolean"}}}, {"ok": True}),
        ("no", {"properties": {"ok": {"type": "boolean"}}}, {"ok": False}),
        ("1.5", {"properties": {"n": {"type": "number"}}}, {"n": 1.5}),
    ],
)
def test_text_fits_the_schema_or_is_declined(
    text: str, schema: dict[str, Any], content: dict[str, Any] | None
) -> None:
    assert fitted(text, schema) == content
