"""Approve/Deny clicks on Lark approval cards (`card.action.trigger` callbacks).

A button's `value` is the `CardAction` of `activities/channels/actions.py` (cards sent before
`workflow_id` existed name only the session). The click is decided as the clicker (principal =
open_id, channel `lark`) by `api/chat/clicks.py`, and answered with a toast plus, once the
decision is taken, the card redrawn (`cards.decided_card`: no buttons; "1/2" while a second
approver is needed). Lark drops answers after 3 s; see `api/chat/clicks.py` for what a slow
decision answers.
"""

from __future__ import annotations

from typing import Any

from lark_oapi.event.callback.model.p2_card_action_trigger import P2CardActionTrigger

from activities.channels.actions import parse_card_action
from activities.channels.lark.cards import approval_card, decided_card
from contracts import LARK
from core.settings import Settings

from ..chat import clicks
from ..chat.clicks import Click, ClickAnswer

CHANNEL = LARK.name

Answer = dict[str, Any]
"""A card callback's answer: `{"toast": {...}}`, optionally with `"card": {"type": "raw", "data": ...}`."""


def toast(kind: str, content: str) -> Answer:
    """A callback answer that shows a toast (`kind`: success, info, warning, error)."""
    return {"toast": {"type": kind, "content": content}}


def read_click(data: P2CardActionTrigger) -> Click | Answer:
    """The click's decision, or the toast explaining why the button cannot decide anything."""
    event = data.event
    action = parse_card_action(event.action.value if event and event.action else None)
    operator = event.operator.open_id if event and event.operator else None
    if action is None:
        return toast("error", "This button is not a Synapse approval button.")
    if not operator:
        return toast("error", "Lark did not say who clicked; nothing was decided.")
    message_id = event.context.open_message_id if event and event.context else None
    return Click(CHANNEL, action, operator, {"lark_message_id": message_id} if message_id else {})


def lark_answer(answer: ClickAnswer, click: Click, settings: Settings) -> Answer:
    """The toast, plus the card redrawn (keeping its link to the console) when there is one to redraw."""
    reply = toast(answer.kind, answer.text)
    request, outcome = answer.request, answer.outcome
    if request is not None and outcome is not None:
        if outcome.complete:
            card = decided_card(request, outcome)
        else:
            link = settings.console_link(click.workflow_id, click.action.interaction_id)
            card = approval_card(
                request.model_copy(update={"approved_by": outcome.approvals}), click.action.session_key, link
            )
        reply["card"] = {"type": "raw", "data": card}
    return reply


def still_applying() -> Answer:
    """The answer to a click whose decision is not taken yet (it goes on after the answer)."""
    return toast(clicks.STILL_APPLYING.kind, clicks.STILL_APPLYING.text)
