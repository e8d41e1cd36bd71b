"""DingTalk in: bot messages to sessions, card clicks to decisions, over Stream or the webhook.

One `DingTalkInbound` per app (`app.state.dingtalk`). Every event is acked (or answered 200) at
once and handled on the API's event loop afterwards:
- a bot message is taken once (`api/chat/seen.py`: by its `msgId`, durably, across restarts
  and API processes), read (`messages`) and handed to `api/chat/conversations.py`; when
  Temporal cannot take it, it is tried again for about half a minute, then the chat is told to
  send it again;
- a card click is taken once (by the frame's id), decided as the clicker
  (`api/chat/clicks.py`); a refusal or a problem is told to the clicker alone, in their
  one-on-one chat with the bot; a decision taken (or one approval of two) updates the card
  through the session's outbox (with the tool's result).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from dingtalk_stream.frames import CallbackMessage
from temporalio.client import Client

from contracts import InteractionOutcome
from core.agent_registry import AgentRegistry
from core.settings import Settings

from ..chat import clicks
from ..chat.conversations import Background, Conversations
from ..chat.seen import SeenEvents
from .channel import DingTalkChat
from .messages import CHANNEL

log = logging.getLogger(__name__)

RETRY_DELAYS_SECONDS = (1.0, 2.0, 4.0, 8.0, 16.0)
"""Waits between tries to hand a message to Temporal (it was acked: DingTalk will not resend it)."""
NOT_TAKEN_TEXT = "I could not take this message just now (Synapse is not reachable); please send it again."


class DingTalkInbound:
    """Turns DingTalk bot messages into session messages and card clicks into decisions."""

    def __init__(self, settings: Settings, registry: AgentRegistry) -> None:
        """Build the channel; `bind` must be called from the running app before events arrive."""
        self._settings = settings
        self._seen = SeenEvents(settings.data_dir)
        self._background = Background()
        self.chat = DingTalkChat(settings)
        self.on_decided: Callable[[InteractionOutcome], None] | None = None
        """Hears every decision a click takes (the API's metrics)."""
        self.conversations = Conversations(settings, registry, channel=self.chat, background=self._background)

    def bind(self, client: Client) -> None:
        """Attach the Temporal client (from the app's lifespan)."""
        self.conversations.bind(client)

    async def drain(self) -> None:
        """On shutdown: give background work (replies, decisions in flight) a moment, then stop it."""
        await self._background.drain()

    # ------------------------------------------------------------------ taking events (ack at once)

    def accept_message(self, data: dict[str, Any]) -> None:
        """Take a bot message; it is handled after the ack."""
        self._background.spawn(self.on_message(data))

    def accept_frame(self, frame: CallbackMessage) -> None:
        """Take a Stream frame of the bot-message topic."""
        self.accept_message(frame.data if isinstance(frame.data, dict) else {})

    def accept_click(self, frame: CallbackMessage) -> None:
        """Take a Stream frame of the card-callback topic."""
        data = frame.data if isinstance(frame.data, dict) else {}
        self._background.spawn(self.on_click(data, frame.headers.message_id))

    # ------------------------------------------------------------------ the work

    async def on_message(self, data: dict[str, Any]) -> None:
        """Deliver a bot message to its session, once per `msgId`."""
        msg_id = data.get("msgId")
        if isinstance(msg_id, str) and msg_id and not await self._seen.claim(CHANNEL, f"msg:{msg_id}"):
            log.info("DingTalk message %s was already taken; skipped", msg_id)
            return
        found = self.chat.read_message(data)
        event = msg_id if isinstance(msg_id, str) else None
        for attempt, delay in enumerate((*RETRY_DELAYS_SECONDS, None), start=1):
            try:
                await self.conversations.receive(found, event)
                return
            except Exception as err:  # Temporal unreachable or slow: the message was acked, so retry here
                if delay is None:
                    log.error(
                        "DingTalk message %s could not be delivered after %d tries: %r", msg_id, attempt, err
                    )
                    chat = getattr(found, "chat_id", None)
                    if chat:
                        await self.chat.reply(chat, None, NOT_TAKEN_TEXT, "not-taken")
                    return
                log.warning(
                    "DingTalk message %s: delivery failed (%r); trying again in %.0f s", msg_id, err, delay
                )
                await asyncio.sleep(delay)

    async def on_click(self, data: dict[str, Any], frame_id: str | None) -> None:
        """Decide a card click, once per frame; tell the clicker when it decided nothing."""
        if frame_id and not await self._seen.claim(CHANNEL, f"click:{frame_id}"):
            log.info("DingTalk card callback %s was already taken; skipped", frame_id)
            return
        click = self.chat.read_click(data)
        if isinstance(click, str):
            log.info("DingTalk card callback %s ignored: %s", frame_id, click)
            return
        click = self.conversations.decider(click)
        try:
            answer = await clicks.decide(
                self.conversations.client, click, self._background.tasks, self.on_decided
            )
        except Exception as err:  # Temporal unreachable: say so; the card still asks
            log.warning("DingTalk click on %s failed: %r", click.action.interaction_id, err)
            answer = clicks.ClickAnswer(
                "warning", "Synapse could not take the decision now; press the button again."
            )
        await self.chat.answer_click(click, answer, f"click/{frame_id}")
