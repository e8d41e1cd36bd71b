"""The `deliver_message` activity: one session delivery to its chat, by the channel it names.

Each chat channel (`lark/`, `dingtalk/`) is a `ChatOutbound` (the outbound half of the API's
`ChatChannel`, `api/chat/channel.py`): a blocking `deliver(message, key)` that sends texts,
approval cards and card updates (an event a session tells its chat is put in words here first,
`core.wording.chat_text`, and sent as a text), raising `ApplicationError`s whose type says
whether a retry can help. The activity runs it in a thread with a key equal across retries of
this activity and unique otherwise, so a retried delivery is not posted twice. The activity name
is part of recorded histories (do not rename it); its logic may change freely.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, Protocol

from temporalio import activity
from temporalio.exceptions import ApplicationError

from contracts import DINGTALK, LARK, Delivery, ErrorType, OutboundMessage
from contracts.names import DELIVER_MESSAGE
from core.settings import Settings
from core.wording import chat_text


class ChatOutbound(Protocol):
    """Sends to one chat platform."""

    def deliver(self, message: OutboundMessage, key: str) -> Delivery:
        """Deliver `message` (blocking); `key` names the delivery, equal across its retries."""
        ...


def invalid_outbound(message: str) -> ApplicationError:
    """The non-retryable error of a message no channel can send."""
    return ApplicationError(
        f"invalid outbound message: {message}", type=ErrorType.INVALID_OUTBOUND_MESSAGE, non_retryable=True
    )


def worded(message: OutboundMessage) -> OutboundMessage:
    """An `event` message as the text the chat gets (other kinds as they are)."""
    if message.kind != "event":
        return message
    if message.event is None:
        raise invalid_outbound("a message of kind `event` needs its `event`")
    text = chat_text(message.event, message.interaction)
    return message.model_copy(update={"kind": "text", "text": text, "event": None})


def chat_channels(settings: Settings) -> dict[str, ChatOutbound]:
    """Every chat channel by name (each imports its SDK on first use, so all are cheap to build)."""
    from .dingtalk.delivery import DingTalkChannel
    from .lark.delivery import LarkChannel

    return {LARK.name: LarkChannel(settings), DINGTALK.name: DingTalkChannel(settings)}


class ChatDelivery:
    """The `deliver_message` activity over the chat channels."""

    def __init__(self, settings: Settings, channels: dict[str, ChatOutbound] | None = None) -> None:
        self._channels = channels if channels is not None else chat_channels(settings)

    def activities(self) -> list[Callable[..., Any]]:
        """The bound activity methods, for `Worker(activities=...)`."""
        return [self.deliver_message]

    @activity.defn(name=DELIVER_MESSAGE)
    async def deliver_message(self, message: OutboundMessage) -> Delivery:
        """Deliver one outbound message to its chat, through the channel it names.

        Args:
            message: What to deliver, and where (`channel`: `lark` or `dingtalk`).

        Returns:
            The (first) message id (a card's id, to update it) and the number of messages sent.

        Raises:
            ApplicationError: the channel's own (see its `delivery` module), or
                `InvalidOutboundMessage` for a channel Synapse does not have.
        """
        channel = self._channels.get(message.channel)
        if channel is None:
            raise invalid_outbound(
                f"channel {message.channel!r} is not a chat channel; expected one of {', '.join(sorted(self._channels))}"
            )
        message = worded(message)
        info = activity.info()
        key = f"{info.workflow_id}/{info.workflow_run_id}/{info.activity_id}"
        delivery = await asyncio.to_thread(channel.deliver, message, key)
        activity.logger.info(
            "delivered %s to %s chat %s: %s (%d part(s))",
            message.kind,
            message.channel,
            message.chat_id,
            delivery.message_id,
            delivery.parts,
        )
        return delivery
