"""Lark/Feishu as a `ChatChannel` (`api/chat/channel.py`): its messages, clicks, users and replies.

Reading is `messages` and `clicks`; replies go through the outbound half the session deliveries use
(`activities/channels/lark/`). A Lark user is their open_id (`ou_…`), the one spelling
`contracts.principals` gives `lark:ou_…` too.
"""

from __future__ import annotations

import asyncio

from lark_oapi.api.im.v1 import P2ImMessageReceiveV1
from lark_oapi.event.callback.model.p2_card_action_trigger import P2CardActionTrigger

from activities.channels.lark.delivery import LarkChannel
from contracts import OutboundMessage
from core.settings import Settings

from ..chat.channel import ChannelBasics, ChatPeople
from ..chat.clicks import Click, ClickAnswer
from ..chat.conversations import Found, courtesy
from .clicks import Answer, lark_answer, read_click
from .messages import CHANNEL, read_message


class LarkChat(ChannelBasics):
    """One Lark app, as the API reads and answers it (its people: `LARK_ADMINS`,
    `LARK_REQUESTERS_DECIDE`)."""

    def __init__(self, settings: Settings, bot_open_id: str | None = None) -> None:
        super().__init__(CHANNEL, ChatPeople(settings.lark.admin_ids, settings.lark.requesters_decide))
        self._bot_open_id = bot_open_id
        self._settings = settings
        self.outbound = LarkChannel(settings)
        """The SDK client the session deliveries use."""

    def read_message(self, raw: P2ImMessageReceiveV1) -> Found:
        """`messages.read_message`, with the bot's open_id."""
        return read_message(raw, self._bot_open_id)

    def read_click(self, raw: P2CardActionTrigger) -> Click | Answer:
        """`clicks.read_click`: the click, or the toast that says why it decides nothing."""
        return read_click(raw)

    async def answer_click(self, click: Click, answer: ClickAnswer, why: str) -> Answer:
        """The callback's answer: a toast, and the card redrawn when the click decided (`clicks.lark_answer`)."""
        return lark_answer(answer, click, self._settings)

    async def reply(self, chat_id: str, reply_to: str | None, text: str, why: str) -> None:
        """Answer a message that reaches no session (unsupported, too large, cancelled) in its chat."""
        message = OutboundMessage(channel=CHANNEL, chat_id=chat_id, kind="text", text=text, reply_to=reply_to)
        # The key makes Lark keep one reply per message, however often it is sent or redelivered.
        await courtesy(
            lambda: asyncio.to_thread(self.outbound.deliver, message, f"{why}/{reply_to}"),
            f"tell Lark chat {chat_id} why a message was not delivered ({why})",
        )
