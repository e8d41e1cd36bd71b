"""Clicks on DingTalk approval cards (Stream topic `/v1.0/card/instances/callback`).

The callback names the card (`outTrackId`), the clicker (`userId`) and, in `content`'s
`cardPrivateData.params`, the button's params: the `CardAction` of
`activities/channels/actions.py`, filled from the card's variables. Parsed by the SDK's own
`CardCallbackMessage.from_dict`.
"""

from __future__ import annotations

from typing import Any

from dingtalk_stream.card_callback import CardCallbackMessage

from activities.channels.actions import parse_card_action
from contracts import DINGTALK

from ..chat.clicks import Click

CHANNEL = DINGTALK.name


def read_click(data: dict[str, Any]) -> Click | str:
    """The click's decision, or why the callback cannot decide anything."""
    try:
        callback = CardCallbackMessage.from_dict(data)
    except (TypeError, ValueError, AttributeError) as err:
        return f"not a card callback DingTalk sends ({type(err).__name__}: {err})"
    content = callback.content if isinstance(callback.content, dict) else {}
    private = content.get("cardPrivateData")
    params = private.get("params") if isinstance(private, dict) else None
    action = parse_card_action(params)
    if action is None:
        return f"the clicked button is not a Synapse approval button (params {params!r})"
    if not callback.user_id:
        return "DingTalk did not say who clicked; nothing was decided"
    card = callback.card_instance_id
    return Click(CHANNEL, action, str(callback.user_id), {"dingtalk_card_id": card} if card else {})
