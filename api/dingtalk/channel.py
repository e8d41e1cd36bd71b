"""DingTalk as a `ChatChannel` (`api/chat/channel.py`): its messages, clicks, users and replies.

Reading is `messages` and `clicks`; replies go through the outbound half the session deliveries
use (`activities/channels/dingtalk/`). A DingTalk user is their userId, as given.
"""

from __future__ import annotations

import asyncio
from typing import Any

from activities.channels.dingtalk.cards import USER_PREFIX
from activities.channels.dingtalk.delivery import DingTalkChannel
from contracts import OutboundMessage
from core.settings import Settings

from ..chat.channel import ChannelBasics, ChatPeople
from ..chat.clicks import Click, ClickAnswer
from ..chat.conversations import Found, courtesy
from .clicks import read_click
from .messages import CHANNEL, read_message


class DingTalkChat(ChannelBasics):
    """One DingTalk app, as the API reads and answers it (its people: `DINGTALK_ADMINS`,
    `DINGTALK_REQUESTERS_DECIDE`)."""

    def __init__(self, settings: Settings) -> None:
        super().__init__(
            CHANNEL, ChatPeople(settings.dingtalk.admin_ids, settings.dingtalk.requesters_decide)
        )
        self.outbound = DingTalkChannel(settings)
        """The OpenAPI client the session deliveries use."""

    def read_message(self, raw: dict[str, Any]) -> Found:
        """`messages.read_message`."""
        return read_message(raw)

    def read_click(self, raw: dict[str, Any]) -> Click | str:
        """`clicks.read_click`: the click, or why it decides nothing."""
        return read_click(raw)

    async def answer_click(self, click: Click, answer: ClickAnswer, why: str) -> None:
        """Tell the clicker alone, in their one-on-one chat with the bot, when the click decided nothing
        (a decision taken shows on the card: the session's outbox updates it)."""
        if answer.kind != "success":
            text = f"{answer.text} ({click.action.interaction_id})"
            await self.reply(f"{USER_PREFIX}{click.operator}", None, text, why)

    async def reply(self, chat_id: str, reply_to: str | None, text: str, why: str) -> None:
        """Answer in a chat (a courtesy: tried again while DingTalk is unavailable, never failed for)."""
        message = OutboundMessage(channel=CHANNEL, chat_id=chat_id, kind="text", text=text)
        await courtesy(
            lambda: asyncio.to_thread(self.outbound.deliver, message, why),
            f"tell DingTalk chat {chat_id} ({why})",
        )
