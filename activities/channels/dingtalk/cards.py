"""DingTalk message content: an approval card's template variables, and texts. Pure, no I/O.

An approval card is an instance of the template DINGTALK_CARD_TEMPLATE_ID (built in DingTalk's
card builder), filled from `cardParamMap`, whose values are all strings (`card_params`). Its
buttons call back with `params` built from the same variables: `{"action": "approve" | "deny" |
"approve_session", "interaction_id": "${interaction_id}", "session_key": "${session_key}",
"workflow_id": "${workflow_id}"}` (read back by `activities/channels/actions.parse_card_action`).
A decision updates the same variables in place (`status`, `decided_by`, `decided_at`, `result`).

Without a template the request goes as Markdown (`request_markdown`), answered with 确认/取消.
"""

from __future__ import annotations

import json

from contracts import (
    Ask,
    GateAsk,
    InteractionOutcome,
    InteractionRequest,
    InteractionType,
    Principal,
    QuestionAsk,
    ToolApprovalAsk,
)
from core.times import utc_text
from core.visible import visible

from ..wording import LINE_LIMIT, cut, grants_session, result_line, subject

TEXT_LIMIT = 3000
"""Characters per text or Markdown message: DingTalk's robot messages hold ~5000; this reads as one screen."""
ARGUMENTS_LIMIT = 3000
USER_PREFIX = "user:"
"""A one-on-one chat's `chat_id` is `user:<userId>`; a group's is its openConversationId."""
REPLY_HINT = "回复 **确认** 执行，或 **取消** 取消 · Reply 确认 (approve) or 取消 (deny)."

PENDING = "pending"
STATUSES = (PENDING, "approved", "denied", "timed_out", "cancelled", "partly_approved")
"""The values of the `status` variable (the template can show each differently)."""


def one_on_one(chat_id: str) -> str | None:
    """The userId of a one-on-one chat's `chat_id`; None for a group."""
    return chat_id.removeprefix(USER_PREFIX) if chat_id.startswith(USER_PREFIX) else None


def arguments(request: InteractionRequest) -> str:
    """What the call would do: a gate's inputs, the SQL or command, the other arguments (JSON), the
    summary; non-printing characters escaped (`core.visible`)."""
    return cut(visible(_arguments(request)), ARGUMENTS_LIMIT)


def _arguments(request: InteractionRequest) -> str:
    ask = request.ask
    if isinstance(ask, GateAsk):
        inputs = ask.input_data
        return json.dumps(inputs, indent=2, ensure_ascii=False, default=str) if inputs else "(no inputs)"
    if isinstance(ask, QuestionAsk):
        return ask.question
    params = ask.arguments
    for name in ("sql", "command"):
        value = params.get(name)
        if isinstance(value, str):
            return value.strip()
    if params:
        return json.dumps(params, indent=2, ensure_ascii=False, default=str)
    return ask.summary


def _status(outcome: InteractionOutcome | None) -> str:
    if outcome is None:
        return PENDING
    if outcome.decided_by == Principal.TIMEOUT:
        return "timed_out"
    if outcome.decided_by == Principal.CANCEL:
        return "cancelled"
    if not outcome.complete:
        return "partly_approved"
    return "approved" if outcome.approved else "denied"


def _status_text(request: InteractionRequest, outcome: InteractionOutcome | None) -> str:
    """The status in words, for templates that show one line."""
    if outcome is None:
        deadline = utc_text(request.expires_at) if request.expires_at else "no deadline"
        return f"Waiting for a decision (until {deadline}; unanswered requests are cancelled)"
    when = utc_text(outcome.decided_at)
    status = _status(outcome)
    if status == "timed_out":
        return f"操作已取消（超时）· Timed out — cancelled at {when}: nobody decided in time"
    if status == "cancelled":
        return f"Cancelled with the session at {when}"
    if status == "partly_approved":
        return f"Approved by {outcome.decided_by} ({len(outcome.approvals)}/2): another approver must approve too"
    verdict = "Approved" if outcome.approved else "Denied"
    text = f"{verdict} by {outcome.decided_by} at {when} (via {outcome.channel})"
    if outcome.grant_id:
        text += f"; the same call is allowed for the rest of the session ({outcome.grant_id})"
    return text


def card_params(
    request: InteractionRequest,
    session_key: str,
    link: str | None = None,
    outcome: InteractionOutcome | None = None,
) -> dict[str, str]:
    """The approval card's `cardParamMap`: every template variable, as strings.

    Args:
        request: The interaction the card shows (`approved_by` counts approvals so far).
        session_key: The session (`dingtalk:<conversationId>`), sent back by the buttons.
        link: The request's page in the web console.
        outcome: The decision, once there is one (None: the card still asks).
    """
    ask = request.ask
    asked = (
        "Confirmation needed"
        if request.interaction_type == InteractionType.CONFIRMATION
        else "Approval needed"
    )
    decided = outcome is not None and outcome.complete
    result = result_line(outcome.tool_result) if outcome is not None and outcome.approved else None
    return {
        "interaction_id": request.interaction_id,
        "session_key": session_key,
        "workflow_id": request.workflow_id,
        "title": f"{asked}: {subject(request)}",
        "tool_name": subject(request),
        "arguments": arguments(request),
        "reason": cut(visible(_reason(ask)), LINE_LIMIT),
        "requested_by": request.requested_by or "",
        "approvers": ", ".join(request.approvers) if request.approvers else "anyone in this chat",
        "approvals": f"{len(request.approved_by)}/{request.approvals_required}",
        "expires_at": utc_text(request.expires_at) if request.expires_at else "none",
        "status": _status(outcome),
        "status_text": _status_text(request, outcome),
        "decided_by": outcome.decided_by if outcome is not None and decided else "",
        "decided_at": utc_text(outcome.decided_at) if outcome is not None and decided else "",
        "comment": cut(outcome.comment or "", LINE_LIMIT) if outcome is not None else "",
        "result": result or "",
        "can_grant": "true" if grants_session(request) and not decided else "false",
        "buttons": "false" if decided else "true",
        "link": link or "",
    }


def _reason(ask: Ask) -> str:
    """Why it asks: a call's reason for needing approval, a gate's prompt."""
    if isinstance(ask, ToolApprovalAsk):
        return ask.reason
    return ask.prompt if isinstance(ask, GateAsk) else ""


def request_markdown(params: dict[str, str]) -> dict[str, str]:
    """An approval request as a Markdown message (`{"title", "text"}`), for bots without a card template."""
    lines = [
        f"### {params['title']}",
        f"**Tool:** {params['tool_name']}",
        "```",
        params["arguments"],
        "```",
    ]
    if params["reason"]:
        lines.append(f"**Why it needs approval:** {params['reason']}")
    lines += [
        f"**Who may approve:** {params['approvers']}",
        f"**Status:** {params['status_text']}",
        f"**Request:** {params['interaction_id']}",
    ]
    if params["buttons"] == "true":
        lines.append(REPLY_HINT)
    if params["link"]:
        lines.append(f"[Open in the console]({params['link']})")
    return {"title": params["title"], "text": "\n\n".join(lines)}


def with_mentions(text: str, principals: list[str]) -> str:
    """A text naming `principals` after it (`@<userId>`)."""
    return f"{text} {' '.join('@' + p for p in principals)}" if principals else text


def markdown_param(title: str, text: str) -> str:
    """`msgParam` of a `sampleMarkdown` robot message."""
    return json.dumps({"title": title, "text": text}, ensure_ascii=False)


def text_param(text: str) -> str:
    """`msgParam` of a `sampleText` robot message."""
    return json.dumps({"content": text}, ensure_ascii=False)
