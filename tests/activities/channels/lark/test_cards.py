"""The Lark card and text builders (pure functions)."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest

from activities.channels.actions import APPROVE, DENY, CardAction, button_value, parse_card_action
from activities.channels.lark.cards import approval_card, decided_card, escape, text_chunks
from contracts import CallContext, InteractionOutcome, InteractionRequest, ToolApprovalAsk, content_of
from core.settings import Settings

AT = datetime(2026, 5, 1, 10, 0, tzinfo=UTC)


def request(**asked: Any) -> InteractionRequest:
    ask = ToolApprovalAsk(**{"tool": "sql", "arguments": {"sql": "DELETE FROM t"}, **asked})
    return InteractionRequest(
        interaction_id="tool_7",
        interaction_type="tool_approval",
        workflow_id="session:lark:oc_1",
        content=content_of(ask),
        timestamp=AT,
        ask=ask,
    )


def outcome(**fields: Any) -> InteractionOutcome:
    values = {"interaction_id": "tool_7", "channel": "lark", "decided_at": AT}
    return InteractionOutcome(**{**values, **fields})


def markdown(card: dict[str, Any]) -> str:
    return "\n".join(e["content"] for e in card["body"]["elements"] if e.get("tag") == "markdown")


def test_button_values_round_trip() -> None:
    value = button_value(APPROVE, "lark:oc_1", "tool_7", "session:lark:oc_1")

    assert value == {
        "action": "approve",
        "session_key": "lark:oc_1",
        "interaction_id": "tool_7",
        "workflow_id": "session:lark:oc_1",
    }
    assert parse_card_action(value) == CardAction("approve", "lark:oc_1", "tool_7", "session:lark:oc_1")
    assert parse_card_action(button_value(DENY, "k", "i", "graph:g")) == CardAction(
        "deny", "k", "i", "graph:g"
    )
    old_card = {"action": "deny", "session_key": "k", "interaction_id": "i"}
    assert parse_card_action(old_card) == CardAction("deny", "k", "i"), (
        "cards sent before workflow_id still work"
    )


@pytest.mark.parametrize(
    "value",
    [None, "approve", {}, {"action": "maybe", "session_key": "k", "interaction_id": "i"}, {"action": "deny"}],
)
def test_other_values_are_not_card_actions(value: Any) -> None:
    assert parse_card_action(value) is None


def test_anyone_may_approve_without_a_deadline_and_other_tools_show_json() -> None:
    card = approval_card(request(tool="http", arguments={"url": "https://x", "n": 1}), "lark:oc_1")

    text = markdown(card)
    assert "**Who may approve:** anyone in this chat" in text and "**Deadline:** none" in text
    assert '```json\n{\n  "url": "https://x",\n  "n": 1\n}\n```' in text
    assert card["header"]["subtitle"]["content"] == "tool_7"


def test_a_card_links_to_the_request_in_the_console() -> None:
    settings = Settings(console_url="https://synapse.example/ui/", _env_file=None)
    link = settings.console_link("session:lark:oc_1", "tool_7")
    card = approval_card(request(), "lark:oc_1", link)

    assert link == "https://synapse.example/ui/#/sessions/lark%3Aoc_1?interaction=tool_7"
    graph = "graph:6f1c2d3e-0000-4000-8000-000000000001"
    assert settings.console_link(graph, "gate-1") == (
        "https://synapse.example/ui/#/graphs/6f1c2d3e-0000-4000-8000-000000000001?interaction=gate-1"
    ), "a graph's gate is decided on the graph's page"
    assert settings.console_link(f"{graph}:task:9a:v2", "t9av2-tool_1").startswith(
        "https://synapse.example/ui/#/graphs/6f1c2d3e-0000-4000-8000-000000000001?"
    ), "so are its task runs' tool approvals"
    assert f"[Open in the console]({link})" in markdown(card)
    assert "Open in the console" not in markdown(approval_card(request(), "lark:oc_1"))


def test_user_text_cannot_mention_everyone_or_escape_the_code_block() -> None:
    card = approval_card(request(reason="<at id=all></at> **now**", arguments={"sql": "SELECT '```'"}), "k")
    denied = decided_card(
        request(), outcome(approved=False, decided_by="mallory<b>", comment="<at id=all></at>")
    )

    assert "<at id=all>" not in json.dumps(card) and "<at id=all>" not in json.dumps(denied)
    assert escape("<a>*`~[") == "&#60;a&#62;&#42;&#96;&#126;&#91;"
    assert markdown(card).count("```") == 2, "only the fence itself"


def test_a_terminal_command_card_shows_the_command_where_it_runs_and_its_sandbox() -> None:
    card = approval_card(
        request(
            tool="terminal",
            arguments={"command": "rm -rf build"},
            context=CallContext(cwd="/srv/app`x", sandbox="workspace-write"),
        ),
        "k",
    )

    assert "rm -rf build" in markdown(card)
    assert "**Runs in:** `/srv/app'x`" in markdown(card), "a backtick cannot end the code span early"
    assert "**Sandbox:** `workspace-write`" in markdown(card)


def test_a_card_says_when_a_command_is_not_sandboxed_and_why() -> None:
    remote = approval_card(
        request(
            tool="terminal",
            arguments={"command": "make"},
            context=CallContext(
                sandbox="none", sandbox_note="a ttyd terminal runs elsewhere and Synapse does not sandbox it"
            ),
        ),
        "k",
    )
    assert "**Sandbox:** `none` — a ttyd terminal runs elsewhere and Synapse does not sandbox it" in markdown(
        remote
    )
    missing = approval_card(
        request(
            tool="terminal",
            arguments={"command": "make"},
            context=CallContext(cwd="/srv", sandbox="workspace-write", sandbox_unavailable="no bwrap"),
        ),
        "k",
    )
    assert "**Sandbox:** `workspace-write` — unavailable here: no bwrap" in markdown(missing)


HIDDEN = {"\u202e": r"\u202e", "\x9b": r"\x9b", "\u200b": r"\u200b", "\ufeff": r"\ufeff", "\u2028": r"\u2028"}
"""Characters that print nothing (a direction override, CSI, a zero-width space, a byte-order
mark, a line separator) and how a card shows them."""
ASKED: list[Callable[[str], dict[str, Any]]] = [
    lambda c: {"tool": "terminal", "arguments": {"command": f"rm -rf /tmp/a{c}b"}},
    lambda c: {"arguments": {"sql": f"DELETE FROM t WHERE note = 'a{c}b'"}},
    lambda c: {"arguments": {}, "summary": f"mail: a{c}b"},
    lambda c: {"tool": "terminal", "arguments": {"command": "ls"}, "context": CallContext(cwd=f"/srv/a{c}b")},
    lambda c: {"reason": f"`/tmp/a{c}b` is outside the trusted folders"},
]
"""Where a card shows what a call would do: its command, SQL, summary, folder and reason."""


@pytest.mark.parametrize(("char", "shown"), HIDDEN.items(), ids=HIDDEN.values())
@pytest.mark.parametrize("asked", ASKED, ids=["command", "sql", "summary", "folder", "reason"])
def test_what_a_card_asks_about_shows_every_character_that_prints_nothing(
    asked: Callable[[str], dict[str, Any]], char: str, shown: str
) -> None:
    content = asked(char)
    for card in (
        approval_card(request(**content), "k"),
        decided_card(request(**content), outcome(approved=True, decided_by="alice")),
    ):
        assert f"a{shown}b" in markdown(card)
        assert char not in json.dumps(card, ensure_ascii=False), "the character itself is not on the card"


def test_long_sql_is_cut_to_keep_the_card_small() -> None:
    card = approval_card(request(arguments={"sql": "SELECT 1;\n" * 2000}), "k")

    assert len(json.dumps(card).encode()) < 30 * 1024
    assert "more characters" in markdown(card)


@pytest.mark.parametrize(
    ("fields", "title", "template", "line"),
    [
        (
            {"approved": False, "decided_by": "lark:ou_b", "comment": "not now"},
            "Denied: sql",
            "red",
            "**Denied** by <at id=ou_b></at>",
        ),
        (
            {"approved": False, "decided_by": "system:cancel", "channel": "system"},
            "Cancelled: sql",
            "grey",
            "**Cancelled** with the session",
        ),
        (
            {
                "approved": True,
                "decided_by": "alice",
                "tool_result": {"tool_id": "sql", "ok": False, "error": "locked"},
            },
            "Approved: sql",
            "green",
            "**Result:** failed: locked",
        ),
        (
            {
                "approved": True,
                "decided_by": "alice",
                "tool_result": {
                    "tool_id": "sql",
                    "ok": True,
                    "content": {"statement": "SELECT", "columns": ["a"], "rows": [[1], [2]]},
                },
            },
            "Approved: sql",
            "green",
            "**Result:** SELECT returned 2 rows",
        ),
    ],
)
def test_decided_cards(fields: dict[str, Any], title: str, template: str, line: str) -> None:
    card = decided_card(request(), outcome(**fields))

    assert card["header"]["title"]["content"] == title and card["header"]["template"] == template
    assert line in markdown(card)
    assert "button" not in json.dumps(card) and "确认" not in markdown(card)


def test_text_chunks() -> None:
    assert text_chunks("short") == ["short"]
    assert text_chunks("  \n ") == [] and text_chunks("") == []
    assert text_chunks("aa\nbb\ncc", limit=5) == ["aa\nbb", "cc"]
    assert text_chunks("abcdefgh\nij", limit=3) == ["abc", "def", "gh", "ij"]
    assert text_chunks("a\n\n\n\nb", limit=2) == ["a", "b"]
    with pytest.raises(ValueError, match="positive"):
        text_chunks("x", limit=0)
