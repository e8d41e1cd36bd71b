"""The chat channels (Lark/Feishu, DingTalk) by name, what a session sends out to one, and what the
channel answers."""

from __future__ import annotations

from typing import Literal

from pydantic import ConfigDict, Field

from .base import Contract
from .errors import ErrorType
from .events import StreamEvent
from .principals import PersonId
from .streaming import InteractionOutcome, InteractionRequest


class ChatChannelNames(Contract):
    """What one chat channel is called, in every layer alike: its name (its session keys' prefix,
    its messages' and decisions' `channel`), the name people know it by, and the errors of its
    deliveries that no retry mends."""

    model_config = ConfigDict(frozen=True)

    name: str = Field(description="`lark`, `dingtalk`: a session key `<name>:...` is one of its chats'.")
    title: str = Field(description="As people know it: `Lark`, `DingTalk`.")
    refusals: tuple[ErrorType, ...] = Field(
        description="Errors of its `deliver_message` that no retry mends (it raises them non-retryable too)."
    )


LARK = ChatChannelNames(
    name="lark",
    title="Lark",
    refusals=(ErrorType.LARK_AUTH_ERROR, ErrorType.LARK_REJECTED, ErrorType.LARK_NOT_CONFIGURED),
)
DINGTALK = ChatChannelNames(
    name="dingtalk",
    title="DingTalk",
    refusals=(ErrorType.DINGTALK_AUTH_ERROR, ErrorType.DINGTALK_REJECTED, ErrorType.DINGTALK_NOT_CONFIGURED),
)
CHAT_CHANNEL_NAMES = {channel.name: channel for channel in (LARK, DINGTALK)}
"""Every chat channel by name."""
CHAT_CHANNELS = frozenset(CHAT_CHANNEL_NAMES)
"""The chat channels a session delivers to (its outbox); a session of any other channel (http, cli)
sends nothing out."""
DELIVERY_REFUSALS = (*LARK.refusals, *DINGTALK.refusals, ErrorType.INVALID_OUTBOUND_MESSAGE)
"""Errors of the `deliver_message` activity that no retry mends: every channel's `refusals`, and a
message no channel can send."""


class OutboundMessage(Contract):
    """Input of the `deliver_message` activity: one message to a chat, or an update of a card."""

    channel: str = Field(description="Channel to deliver on: `lark`.")
    chat_id: str = Field(description="The chat (Lark `chat_id`) the session belongs to.")
    kind: Literal["text", "approval_card", "card_update", "event"] = Field(
        description="A text message, an interactive approval card, an update of a sent card, or an event "
        "told in words (the `deliver_message` activity words it and sends it as a text)."
    )
    text: str | None = Field(default=None, description="The text (kind `text`); long texts are split.")
    event: StreamEvent | None = Field(
        default=None,
        description="What happened (kind `event`): told in the words of `core.wording.chat_text`, about "
        "`interaction` when it concerns one.",
    )
    mentions: list[PersonId] = Field(
        default_factory=list,
        description="People the text names (principals), shown after it as the channel mentions them "
        "(Lark: `<at user_id>`, so they are notified).",
    )
    interaction: InteractionRequest | None = Field(
        default=None,
        description="The approval request the card shows (kinds `approval_card`, `card_update`), or the "
        "one an event concerns (kind `event`).",
    )
    outcome: InteractionOutcome | None = Field(
        default=None, description="The decision the updated card shows (kind `card_update`)."
    )
    card_message_id: str | None = Field(
        default=None, description="The card to update (kind `card_update`): its Lark `message_id`."
    )
    reply_to: str | None = Field(
        default=None,
        description="Lark `message_id` to reply to (threads the answer); sent plainly when unset.",
    )
    session_key: str | None = Field(
        default=None,
        description="The session whose chat this is (card buttons name it); from `interaction.task_id` when unset.",
    )


class Delivery(Contract):
    """What the channel answered."""

    message_id: str | None = Field(default=None, description="Lark `message_id` of the (first) message sent.")
    parts: int = Field(default=1, description="How many messages a long text was split into.")
