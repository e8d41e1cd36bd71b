"""Lark/Feishu message content: the approval card, its decided form, and text chunks. Pure, no I/O.

Cards use Lark's **card JSON 2.0** (`"schema": "2.0"`, elements under `body.elements`), sent as
`msg_type=interactive` and updated in place with `PATCH /open-apis/im/v1/messages/{id}`; 2.0
cards are always shared cards, so an update shows to everyone in the chat. Buttons carry a
`callback` behavior: a click reaches the app as a `card.action.trigger` callback whose
`event.action.value` is the button's value (`button_value`; read it with `parse_card_action`).

User-supplied text (reasons, comments, names) is escaped before it goes into markdown, so a
comment cannot mention `@all` or restyle the card.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final, Literal

from contracts import InteractionOutcome, InteractionRequest, InteractionType, Principal

from ...tools.sentences import describe_result

APPROVE: Final = "approve"
DENY: Final = "deny"
APPROVE_FOR_SESSION: Final = "approve_session"
"""Approve, and grant the same call for the rest of the session (`response_data.grant = "session"`)."""
Action = Literal["approve", "deny", "approve_session"]

TEXT_LIMIT = 4000
"""Characters per text message. Lark caps a text message's body at 150 KB; ~4000 characters
(16 KB even in 4-byte UTF-8) stays far below that and reads as one screen."""

_MAX_CODE_CHARS = 3000  # a card's content is capped at 30 KB; keep long SQL from reaching it
_MAX_LINE_CHARS = 300
_REPLY_HINT = (
    "也可以直接回复 **确认** 执行，或 **取消** 取消 · You can also reply 确认 (approve) or 取消 (deny)."
)
_MD_SPECIALS = {"<": "&#60;", ">": "&#62;", "*": "&#42;", "`": "&#96;", "~": "&#126;", "[": "&#91;"}
_BROKEN_FENCE = "`\u200b``"
_OPEN_ID = re.compile(r"^(?:lark:)?(ou_[A-Za-z0-9_-]+)$")


@dataclass(frozen=True)
class CardAction:
    """What an Approve/Deny click asks for: `event.action.value` of a `card.action.trigger`."""

    action: Action
    session_key: str
    interaction_id: str
    workflow_id: str | None = None
    """The workflow that asked (a graph or its task run, relayed by the session); None: the session."""


def button_value(action: Action, session_key: str, interaction_id: str, workflow_id: str) -> dict[str, str]:
    """The value a button sends back: `{"action", "session_key", "interaction_id", "workflow_id"}`."""
    return {
        "action": action,
        "session_key": session_key,
        "interaction_id": interaction_id,
        "workflow_id": workflow_id,
    }


def parse_card_action(value: Any) -> CardAction | None:
    """A button value from a card callback, or None when it is not one of our buttons."""
    if not isinstance(value, dict):
        return None
    action, key, interaction_id = value.get("action"), value.get("session_key"), value.get("interaction_id")
    if (
        action not in (APPROVE, DENY, APPROVE_FOR_SESSION)
        or not isinstance(key, str)
        or not isinstance(interaction_id, str)
    ):
        return None
    workflow_id = value.get("workflow_id")
    return CardAction(
        action=action,
        session_key=key,
        interaction_id=interaction_id,
        workflow_id=workflow_id if isinstance(workflow_id, str) else None,
    )


def escape(text: str) -> str:
    """`text` safe inside card markdown: mentions, tags and emphasis become literal characters."""
    return "".join(_MD_SPECIALS.get(char, char) for char in text)


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _utc(moment: datetime) -> str:
    aware = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    return aware.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


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
    shown = (
        code
        if len(code) <= _MAX_CODE_CHARS
        else code[:_MAX_CODE_CHARS] + f"\n-- … {len(code) - _MAX_CODE_CHARS} more characters"
    )
    # A run of three backticks would close the fence early: break it with a zero-width space.
    fenced = shown.replace("```", _BROKEN_FENCE)
    return f"```{language}\n{fenced}\n```"


def _content(request: InteractionRequest) -> dict[str, Any]:
    return request.content if isinstance(request.content, dict) else {"summary": str(request.content)}


def _what(request: InteractionRequest) -> str:
    """What the request is about, for titles: the tool, or the graph task a gate holds."""
    content = _content(request)
    if request.interaction_type == InteractionType.CONFIRMATION:
        return f"task {content.get('task_id') or '?'}"
    return str(content.get("tool_name") or "tool")


def _confirmation_elements(request: InteractionRequest) -> list[dict[str, Any]]:
    """A graph gate: its prompt, the task and who runs it, and the inputs it would run with."""
    content = _content(request)
    prompt = escape(_cut(str(content.get("prompt") or "Run this task?"), _MAX_LINE_CHARS))
    task = str(content.get("task_id") or "?").replace("`", "'")
    elements = [
        _markdown(f"**{prompt}**"),
        _markdown(f"**Task:** `{task}` · {escape(str(content.get('assignee_id') or ''))}"),
    ]
    inputs = content.get("input_data")
    if inputs not in (None, {}):
        elements.append(
            _markdown(_code_block(json.dumps(inputs, indent=2, ensure_ascii=False, default=str), "json"))
        )
    return elements


def _tool_elements(request: InteractionRequest) -> list[dict[str, Any]]:
    """Tool, arguments (SQL as a code block) and reason: shared by both forms of the card."""
    if request.interaction_type == InteractionType.CONFIRMATION:
        return _confirmation_elements(request)
    content = _content(request)
    tool = str(content.get("tool_name") or "tool").replace("`", "'")
    line = f"**Tool:** `{tool}`"
    if content.get("tool_description"):
        line += f" — {escape(_cut(str(content['tool_description']), _MAX_LINE_CHARS))}"
    elements = [_markdown(line)]
    params = content.get("tool_params")
    sql = params.get("sql") if isinstance(params, dict) else None
    if isinstance(sql, str):
        elements.append(_markdown(_code_block(sql.strip(), "sql")))
    elif params not in (None, {}):
        elements.append(
            _markdown(_code_block(json.dumps(params, indent=2, ensure_ascii=False, default=str), "json"))
        )
    elif content.get("summary"):
        elements.append(_markdown(escape(_cut(str(content["summary"]), _MAX_LINE_CHARS))))
    context = content.get("context")
    if isinstance(context, dict) and context.get("cwd"):
        folder = _cut(str(context["cwd"]), _MAX_LINE_CHARS).replace("`", "'")
        elements.append(_markdown(f"**Runs in:** `{folder}`"))
    if isinstance(context, dict) and context.get("sandbox"):
        elements.append(_markdown(_sandbox_line(context)))
    if content.get("reason"):
        elements.append(
            _markdown(f"**Why it needs approval:** {escape(_cut(str(content['reason']), _MAX_LINE_CHARS))}")
        )
    return elements


def _sandbox_line(context: dict[str, Any]) -> str:
    """`**Sandbox:** `workspace-write``, with why it cannot run on this worker when it cannot."""
    profile, _, note = str(context["sandbox"]).partition(": ")
    name = _cut(profile, 40).replace("`", "'")
    line = f"**Sandbox:** `{name}`"
    if note:
        line += f" — {escape(_cut(note, _MAX_LINE_CHARS))}"
    if context.get("sandbox_unavailable"):
        line += f" — unavailable here: {escape(_cut(str(context['sandbox_unavailable']), _MAX_LINE_CHARS))}"
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
        request: The pending interaction (`content`: tool_name, tool_params, tool_description,
            summary, reason); its approvers and deadline are shown.
        session_key: The session (e.g. `lark:oc_…`), carried in the button values.
        link: The request's page in the web console, shown under the buttons.

    Returns:
        Card JSON 2.0, for `msg_type=interactive`. Button values are `button_value(...)`.
    """
    tool = _what(request)
    who = ", ".join(_principal(p) for p in request.approvers) if request.approvers else "anyone in this chat"
    deadline = _utc(request.expires_at) if request.expires_at else "none"
    buttons = [
        (
            "Approve",
            "primary_filled",
            button_value(APPROVE, session_key, request.interaction_id, request.workflow_id),
        ),
        ("Deny", "danger", button_value(DENY, session_key, request.interaction_id, request.workflow_id)),
    ]
    if "session" in _content(request).get("grants", []):
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


def _result_line(result: Any) -> str | None:
    """One line about what the approved tool did, from a `ToolResult` dump."""
    if not isinstance(result, dict):
        return None if result is None else _cut(str(result), _MAX_LINE_CHARS)
    if result.get("ok") is False:
        return f"failed: {_cut(str(result.get('error') or 'no error message'), _MAX_LINE_CHARS)}"
    content = result.get("content")
    described = describe_result(result.get("tool_id"), content)
    if described is not None:
        return described.splitlines()[0].rstrip(":")
    if content is None:
        return "done"
    text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False, default=str)
    return _cut(" ".join(text.split()), _MAX_LINE_CHARS)


def decided_card(request: InteractionRequest, outcome: InteractionOutcome) -> dict[str, Any]:
    """The approval card after the decision: no buttons; the decision, who, when, comment, result.

    Args:
        request: The interaction the card showed.
        outcome: The decision. `system:timeout` reads "timed out — cancelled", `system:cancel`
            "cancelled with the session".

    Returns:
        Card JSON 2.0 replacing the approval card (same tool, arguments and reason).
    """
    tool = _what(request)
    when = _utc(outcome.decided_at)
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
        elements.append(_markdown(f"**Comment:** {escape(_cut(outcome.comment, _MAX_LINE_CHARS))}"))
    result = _result_line(outcome.tool_result) if outcome.approved else None
    if result:
        elements.append(_markdown(f"**Result:** {escape(result)}"))
    return _card(title, template, _subtitle(request), elements)


def text_chunks(text: str, limit: int = TEXT_LIMIT) -> list[str]:
    """Split `text` into messages of at most `limit` characters, on line boundaries.

    A line longer than `limit` is cut into `limit`-sized pieces; whitespace-only pieces are
    dropped (Lark rejects empty texts), so `[]` means there is nothing to send.
    """
    if limit <= 0:
        raise ValueError(f"limit must be a positive number of characters, got {limit}")
    if len(text) <= limit:
        return [text] if text.strip() else []
    chunks: list[str] = []
    current: list[str] = []
    length = 0
    for line in text.split("\n"):
        for piece in [line[i : i + limit] for i in range(0, len(line), limit)] or [""]:
            added = len(piece) + (1 if current else 0)
            if current and length + added > limit:
                chunks.append("\n".join(current))
                current, added = [], len(piece)
                length = 0
            current.append(piece)
            length += added
    chunks.append("\n".join(current))
    return [chunk.strip("\n") for chunk in chunks if chunk.strip()]
