"""Lark/Feishu message content: the approval card, its decided form, and text chunks. Pure, no I/O.

Cards use Lark's **card JSON 2.0** (`"schema": "2.0"`, elements under `body.elements`), sent as
`msg_type=interactive` and updated in place with `PATCH /open-apis/im/v1/messages/{id}`; 2.0
cards are always shared cards, so an update shows to everyone in the chat. Buttons carry a
`callback` behavior: a click reaches the app as a `card.action.trigger` callback whose
`event.action.value` is the button's value (`button_value`; read it with `parse_card_action`).

User-supplied text (reasons, comments, names) is escaped before it goes into markdown, so a
comment cannot mention `@all` or restyle the card. What the call would do (arguments, summary,
folder, reason) shows its non-printing characters escaped (`core.visible`).
"""

from __future__ import annotations

import json
import re
from typing import Any

from contracts import (
    CallContext,
    GateAsk,
    InteractionOutcome,
    InteractionRequest,
    InteractionType,
    Principal,
    QuestionAsk,
)
from core.times import utc_text
from core.visible import visible

from .. import wording
from ..actions import APPROVE, APPROVE_FOR_SESSION, DENY, button_value
from ..wording import LINE_LIMIT, cut, grants_session, result_line, subject

TEXT_LIMIT = 4000
"""Characters per text message. Lark caps a text message's body at 150 KB; ~4000 characters
(16 KB even in 4-byte UTF-8) stays far below that and reads as one screen."""

_MAX_CODE_CHARS = 3000  # a card's content is capped at 30 KB; keep long SQL from reaching it
_REPLY_HINT = (
    "也可以直接回复 **确认** 执行，或 **取消** 取消 · You can also reply 确认 (approve) or 取消 (deny)."
)
_MD_SPECIALS = {"<": "&#60;", ">": "&#62;", "*": "&#42;", "`": "&#96;", "~": "&#126;", "[": "&#91;"}
_BROKEN_FENCE = "`\u200b``"
_OPEN_ID = re.compile(r"^(?:lark:)?(ou_[A-Za-z0-9_-]+)$")


def escape(text: str) -> str:
    """`text` safe inside card markdown: mentions, tags and emphasis become literal characters."""
    return "".join(_MD_SPECIALS.get(char, char) for char in text)


def _principal(principal: str) -> str:
    """An open_id (`ou_…`, `lark:ou_…`) as a mention; anyone else as escaped text."""
    match = _OPEN_ID.match(principal)
    return f"<at id={match.group(1)}></at>" if match else escape(principal)


def with_mentions(text: str, principals: list[str]) -> str:
    """A text message naming `principals` after it: open_ids as Lark text mentions (they are notified)."""
    if not principals:
        return text
    named = [
        f'<at user_id="{match.group(1)}"></at>' if (match := _OPEN_ID.match(p)) else escape(p)
        for p in principals
    ]
    return f"{text} {', '.join(named)}"


def _code_block(code: str, language: str) -> str:
    code = visible(code)
    shown = (
        code
        if len(code) <= _MAX_CODE_CHARS
        else code[:_MAX_CODE_CHARS] + f"\n-- … {len(code) - _MAX_CODE_CHARS} more characters"
    )
    # A run of three backticks would close the fence early: break it with a zero-width space.
    fenced = shown.replace("```", _BROKEN_FENCE)
    return f"```{language}\n{fenced}\n```"


def _confirmation_elements(ask: GateAsk) -> list[dict[str, Any]]:
    """A graph gate: its prompt, the task and who runs it, and the inputs it would run with."""
    prompt = escape(cut(ask.prompt or "Run this task?", LINE_LIMIT))
    task = (ask.task_id or "?").replace("`", "'")
    elements = [
        _markdown(f"**{prompt}**"),
        _markdown(f"**Task:** `{task}` · {escape(ask.assignee_id or '')}"),
    ]
    if ask.input_data:
        elements.append(
            _markdown(
                _code_block(json.dumps(ask.input_data, indent=2, ensure_ascii=False, default=str), "json")
            )
        )
    return elements


def _tool_elements(request: InteractionRequest) -> list[dict[str, Any]]:
    """Tool, arguments (SQL as a code block) and reason: shared by both forms of the card."""
    ask = request.ask
    if isinstance(ask, GateAsk):
        return _confirmation_elements(ask)
    if isinstance(ask, QuestionAsk):
        return [_markdown(escape(cut(visible(ask.question), LINE_LIMIT)))]
    tool = (ask.tool or "tool").replace("`", "'")
    line = f"**Tool:** `{tool}`"
    if ask.description:
        line += f" — {escape(cut(ask.description, LINE_LIMIT))}"
    elements = [_markdown(line)]
    params = ask.arguments
    sql = params.get("sql")
    if isinstance(sql, str):
        elements.append(_markdown(_code_block(sql.strip(), "sql")))
    elif params:
        elements.append(
            _markdown(_code_block(json.dumps(params, indent=2, ensure_ascii=False, default=str), "json"))
        )
    elif ask.summary:
        elements.append(_markdown(escape(cut(visible(ask.summary), LINE_LIMIT))))
    context = ask.context
    if context.cwd:
        folder = cut(visible(context.cwd), LINE_LIMIT).replace("`", "'")
        elements.append(_markdown(f"**Runs in:** `{folder}`"))
    if context.sandbox:
        elements.append(_markdown(_sandbox_line(context)))
    if ask.reason:
        reason = escape(cut(visible(ask.reason), LINE_LIMIT))
        elements.append(_markdown(f"**Why it needs approval:** {reason}"))
    return elements


def _sandbox_line(context: CallContext) -> str:
    """`**Sandbox:** `workspace-write``, with why, and why it cannot run on this worker when it cannot."""
    name = cut(context.sandbox or "", 40).replace("`", "'")
    line = f"**Sandbox:** `{name}`"
    if context.sandbox_note:
        line += f" — {escape(cut(context.sandbox_note, LINE_LIMIT))}"
    if context.sandbox_unavailable:
        line += f" — unavailable here: {escape(cut(context.sandbox_unavailable, LINE_LIMIT))}"
    return line


def _markdown(content: str) -> dict[str, Any]:
    return {"tag": "markdown", "content": content}


def _card(title: str, template: str, subtitle: str, elements: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "schema": "2.0",
        "config": {"update_multi": True, "summary": {"content": title}},
        "header": {
            "title": {"tag": "plain_text", "content": title},
            "subtitle": {"tag": "plain_text", "content": subtitle},
            "template": template,
        },
        "body": {"elements": elements},
    }


def _subtitle(request: InteractionRequest) -> str:
    asked = f" · asked by {request.requested_by}" if request.requested_by else ""
    return f"{request.interaction_id}{asked}"


def _button(label: str, style: str, value: dict[str, str]) -> dict[str, Any]:
    return {
        "tag": "button",
        "element_id": value["action"],
        "text": {"tag": "plain_text", "content": label},
        "type": style,
        "behaviors": [{"type": "callback", "value": value}],
    }


def approval_card(request: InteractionRequest, session_key: str, link: str | None = None) -> dict[str, Any]:
    """The interactive card asking a person to approve or deny a tool call.

    Args:
        request: The pending interaction (its `ask`: the tool, its arguments and description,
            the reason; a gate's task and inputs); its approvers and deadline are shown.
        session_key: The session (e.g. `lark:oc_…`), carried in the button values.
        link: The request's page in the web console, shown under the buttons.

    Returns:
        Card JSON 2.0, for `msg_type=interactive`. Button values are `button_value(...)`.
    """
    tool = subject(request)
    who = ", ".join(_principal(p) for p in request.approvers) if request.approvers else "anyone in this chat"
    deadline = utc_text(request.expires_at) if request.expires_at else "none"
    buttons = [
        (
            "Approve",
            "primary_filled",
            button_value(APPROVE, session_key, request.interaction_id, request.workflow_id),
        ),
        ("Deny", "danger", button_value(DENY, session_key, request.interaction_id, request.workflow_id)),
    ]
    if grants_session(request):
        value = button_value(APPROVE_FOR_SESSION, session_key, request.interaction_id, request.workflow_id)
        buttons.insert(1, ("Approve for this session", "primary", value))
    quorum = []
    if request.approvals_required > 1:
        so_far = ", ".join(_principal(p) for p in request.approved_by) or "nobody yet"
        quorum = [
            _markdown(
                f"**Approvals:** {len(request.approved_by)}/{request.approvals_required} ({so_far}) · "
                "two different people must approve"
            )
        ]
    elements = [
        *_tool_elements(request),
        *quorum,
        _markdown(f"**Who may approve:** {who}"),
        _markdown(f"**Deadline:** {deadline} (unanswered requests are cancelled)"),
        {
            "tag": "column_set",
            "flex_mode": "none",
            "columns": [
                {"tag": "column", "width": "auto", "elements": [_button(label, style, value)]}
                for label, style, value in buttons
            ],
        },
        _markdown(f"<font color='grey'>{_REPLY_HINT}</font>"),
        *([_markdown(f"[Open in the console]({link})")] if link else []),
    ]
    asked = (
        "Confirmation needed"
        if request.interaction_type == InteractionType.CONFIRMATION
        else "Approval needed"
    )
    return _card(f"{asked}: {tool}", "orange", _subtitle(request), elements)


def decided_card(request: InteractionRequest, outcome: InteractionOutcome) -> dict[str, Any]:
    """The approval card after the decision: no buttons; the decision, who, when, comment, result.

    Args:
        request: The interaction the card showed.
        outcome: The decision. `system:timeout` reads "timed out — cancelled", `system:cancel`
            "cancelled with the session".

    Returns:
        Card JSON 2.0 replacing the approval card (same tool, arguments and reason).
    """
    tool = subject(request)
    when = utc_text(outcome.decided_at)
    if outcome.decided_by == Principal.TIMEOUT:
        title, template = f"Timed out — cancelled: {tool}", "grey"
        decision = f"**Timed out — cancelled** at {when}: nobody decided before the deadline."
    elif outcome.decided_by == Principal.CANCEL:
        title, template = f"Cancelled: {tool}", "grey"
        decision = f"**Cancelled** with the session at {when}."
    else:
        verdict = "Approved" if outcome.approved else "Denied"
        title, template = f"{verdict}: {tool}", "green" if outcome.approved else "red"
        decision = f"**{verdict}** by {_principal(outcome.decided_by)} at {when}"
        if outcome.channel:
            decision += f" (via {escape(outcome.channel)})"
        if outcome.grant_id:
            decision += f"; the same call is allowed for the rest of the session ({escape(outcome.grant_id)})"
    if outcome.approved and len(outcome.approvals) > 1:
        decision += (
            f" ({len(outcome.approvals)} approvals: {', '.join(_principal(p) for p in outcome.approvals)})"
        )
    elements = [*_tool_elements(request), {"tag": "hr"}, _markdown(decision)]
    if outcome.comment:
        elements.append(_markdown(f"**Comment:** {escape(cut(outcome.comment, LINE_LIMIT))}"))
    result = result_line(outcome.tool_result) if outcome.approved else None
    if result:
        elements.append(_markdown(f"**Result:** {escape(result)}"))
    return _card(title, template, _subtitle(request), elements)


def text_chunks(text: str, limit: int = TEXT_LIMIT) -> list[str]:
    """`wording.text_chunks` at Lark's size of a text message."""
    return wording.text_chunks(text, limit)
