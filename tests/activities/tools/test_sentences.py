"""What people read in chat about a tool message: a result, or a denial (a `ToolDenial`)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from activities.tools.sentences import describe_tool_message
from contracts import ToolDenial, UniversalMessage

AT = datetime(2026, 11, 25, tzinfo=UTC)


def told(content: object) -> str:
    return describe_tool_message(UniversalMessage(role="tool", name="sql", content=content, timestamp=AT))


@pytest.mark.parametrize(
    ("denial", "sentence"),
    [
        (
            ToolDenial(decided_by="alice", message="not now", reason="a person denied it"),
            'I did not run sql: denied by alice (a person denied it) — "not now".',
        ),
        (
            ToolDenial(decided_by="system:timeout", reason="the approval request timed out"),
            "I did not run sql: denied by system:timeout (the approval request timed out).",
        ),
        (
            ToolDenial(decided_by="bob", reason="bob cancelled this request", cancelled=True),
            "I did not run sql: denied by bob (bob cancelled this request).",
        ),
    ],
)
def test_a_denial_reads_as_who_denied_it_why_and_their_words(denial: ToolDenial, sentence: str) -> None:
    assert ToolDenial.of(denial.content()) == denial
    assert told(denial.content()) == sentence


def test_a_result_is_not_a_denial() -> None:
    result = {"tool_id": "sql", "ok": False, "error": "no such table: foo"}
    assert ToolDenial.of(result) is None
    assert told(result) == "sql failed: no such table: foo"
