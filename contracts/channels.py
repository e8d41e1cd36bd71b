"""What a session sends out to a chat channel (Lark/Feishu), and what the channel answers."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from .base import Contract
from .errors import ErrorType
from .events import StreamEvent
from .principals import PersonId
from .streaming import InteractionOutcome, InteractionRequest

CHAT_CHANNELS = frozenset({"lark", "dingtalk"})
"""The chat channels a session delivers to (its outbox); a session of any other channel (http, cli)
sends nothing out."""
DELIVERY_REFUSALS = (
    ErrorType.LARK_AUTH_ERROR,
    ErrorType.LARK_REJECTED,
    ErrorType.LARK_NOT_CONFIGURED,
    ErrorType.INVALID_OUTBOUND_MESSAGE,
)
"""Errors of the `deliver_message` activity that no retry mends (the channels raise their refusals
non-retryable besides)."""


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
