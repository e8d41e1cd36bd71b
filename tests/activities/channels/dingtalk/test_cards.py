"""The DingTalk approval card's template variables (pure): what each state of a request shows."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from activities.channels.dingtalk.cards import arguments, card_params, request_markdown
from contracts import Ask, GateAsk, InteractionOutcome, InteractionRequest, ToolApprovalAsk, content_of

AT = datetime(2026, 11, 26, 10, 0, tzinfo=UTC)


def request(kind: str = "tool_approval", **asked: Any) -> InteractionRequest:
    ask: Ask = (
        GateAsk(**{"task_uuid": "u", **asked})
        if kind == "confirmation"
        else ToolApprovalAsk(**{"tool": "sql", "arguments": {"sql": "DELETE FROM t"}, **asked})
    )
    return InteractionRequest(
        interaction_id="tool_7",
        interaction_type=kind,
        workflow_id="session:dingtalk:cid1",
        content=content_of(ask),
        ask=ask,
        approvers=["alice"],
        timestamp=AT,
        expires_at=AT + timedelta(minutes=5),
    )


def outcome(decided_by: str = "boss", approved: bool = True, **fields: Any) -> InteractionOutcome:
    return InteractionOutcome(
        interaction_id="tool_7",
        approved=approved,
        decided_by=decided_by,
        channel="dingtalk",
        decided_at=AT + timedelta(minutes=1),
        **fields,
    )


@pytest.mark.parametrize(
    ("decision", "status", "buttons", "decided_by"),
    [
        (None, "pending", "true", ""),
        (outcome(), "approved", "false", "boss"),
        (outcome(approved=False), "denied", "false", "boss"),
        (outcome("system:timeout", False), "timed_out", "false", "system:timeout"),
        (outcome("system:cancel", False), "cancelled", "false", "system:cancel"),
        (outcome(complete=False, approvals=["alice"]), "partly_approved", "true", ""),
    ],
)
def test_each_state_of_a_request(
    decision: InteractionOutcome | None, status: str, buttons: str, decided_by: str
) -> None:
    params = card_params(request(), "dingtalk:cid1", "http://console/x", decision)

    assert all(isinstance(value, str) for value in params.values()), "DingTalk takes string variables only"
    assert (params["status"], params["buttons"], params["decided_by"]) == (status, buttons, decided_by)
    assert (params["interaction_id"], params["session_key"], params["link"]) == (
        "tool_7",
        "dingtalk:cid1",
        "http://console/x",
    )


def test_the_result_and_the_grant_show_once_approved() -> None:
    pending = card_params(request(grants=["session"]), "k")
    granted = outcome(grant_id="grant_1", tool_result={"tool_id": "sql", "ok": True, "content": "3 rows"})
    done = card_params(request(grants=["session"]), "k", None, granted)

    assert (pending["can_grant"], done["can_grant"]) == ("true", "false")
    assert done["result"] == "3 rows" and "grant_1" in done["status_text"]


@pytest.mark.parametrize(
    ("content", "kind", "shown"),
    [
        ({"arguments": {"sql": "  DELETE FROM t  "}}, "tool_approval", "DELETE FROM t"),
        (
            {"tool": "terminal", "arguments": {"command": "rm -rf build"}},
            "tool_approval",
            "rm -rf build",
        ),
        ({"tool": "mail", "arguments": {"to": "x"}}, "tool_approval", '{\n  "to": "x"\n}'),
        ({"arguments": {}, "summary": "a summary"}, "tool_approval", "a summary"),
        ({"task_id": "t", "input_data": {"n": 1}}, "confirmation", '{\n  "n": 1\n}'),
        ({"task_id": "t"}, "confirmation", "(no inputs)"),
        # what prints nothing shows escaped: a direction override, CSI, zero-width characters
        (
            {"tool": "terminal", "arguments": {"command": "rm -rf /tmp/x\u202e y\x9b2J"}},
            "tool_approval",
            r"rm -rf /tmp/x\u202e y\x9b2J",
        ),
        (
            {"arguments": {"sql": "DELETE FROM t -- \u200b\u200d\ufeff"}},
            "tool_approval",
            r"DELETE FROM t -- \u200b\u200d\ufeff",
        ),
        (
            {"tool": "mail", "arguments": {"to": "a\u2028b"}},
            "tool_approval",
            '{\n  "to": "a\\u2028b"\n}',
        ),
        ({"arguments": {}, "summary": "mail: a\u200cb"}, "tool_approval", r"mail: a\u200cb"),
        ({"task_id": "t", "input_data": {"n": "\u2066x"}}, "confirmation", '{\n  "n": "\\u2066x"\n}'),
    ],
)
def test_arguments_show_what_the_call_would_do(content: dict[str, Any], kind: str, shown: str) -> None:
    assert arguments(request(kind, **content)) == shown


def test_the_reason_shows_what_prints_nothing_escaped() -> None:
    params = card_params(request(reason="`/tmp/x\u202e` is outside the trusted folders"), "k")
    assert params["reason"] == r"`/tmp/x\u202e` is outside the trusted folders"


def test_without_a_template_the_request_reads_as_markdown() -> None:
    asking = request_markdown(card_params(request(reason="DELETE changes data"), "k"))
    decided = request_markdown(card_params(request(), "k", None, outcome()))

    assert asking["title"] == "Approval needed: sql"
    assert (
        "DELETE FROM t" in asking["text"]
        and "DELETE changes data" in asking["text"]
        and "确认" in asking["text"]
    )
    assert "确认" not in decided["text"] and "Approved by boss" in decided["text"]
