"""Chat messages to sessions, in any chat channel: one conversation per chat, started on first message.

The channel reads its platform's message into a `ChatText` (or says why it is `Unsupported` or
`Ignored`); `Conversations.receive` then:
- delivers a text by signal-with-start to the session `<channel>:<chat>`, with the chat's
  approvers (the channel's admins plus the requester, when requesters decide) and the sender's
  role by the channel's approver settings (`roles.chat_role`): one call for a new chat's first
  message, which refuses to start over a closed run (`calls.sessions.deliver_once`);
- answers a text over SYNAPSE_MAX_MESSAGE_BYTES, or of a type Synapse cannot read, in the chat;
- in a chat whose session was cancelled starts nothing: the chat is told who cancelled it and
  when, and that `/restart` starts a new conversation there (which it then does).
Replies go through the channel's `reply` (`channel.ChatChannel`); they are courtesies, never
retried or failed for.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, replace
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from temporalio.client import Client
from temporalio.exceptions import ApplicationError

from contracts import InboundMessage, Role, SessionConfig
from core.agent_registry import DEFAULT_AGENT, AgentRegistry
from core.settings import Settings

from ..calls import sessions
from ..calls.errors import AlreadyExists
from ..calls.sizes import utf8_size
from .roles import chat_role

if TYPE_CHECKING:
    from .channel import ChatChannel
    from .clicks import Click

log = logging.getLogger(__name__)

MESSAGE_WAIT_SECONDS = 2.5
"""How long delivering a message may wait for signal-with-start (chats redeliver after ~3 s)."""
CLOSING_WAIT_SECONDS = 30.0
"""How long `/restart` waits for a cancelled session that is still closing (its deliveries drain)."""
DRAIN_SECONDS = 5.0
UNSUPPORTED_TEXT = "I can only read text messages for now."
TOO_LARGE_TEXT = (
    "This message is {size:,} bytes; I read messages of up to {limit:,} bytes. "
    "Send a shorter one, or upload the text as an artifact and send its id."
)
RESTART_COMMAND = "/restart"
"""In a chat whose session was cancelled, starts a new conversation (elsewhere it is a message)."""
CANCELLED_TEXT = (
    "This conversation was cancelled{by} {at}{why}, so I no longer read messages here. "
    f"Send {RESTART_COMMAND} to start a new conversation in this chat."
)
RESTARTED_TEXT = "Started a new conversation; I do not remember the one before. What can I do for you?"


@dataclass(frozen=True)
class ChatText:
    """A text message for a session."""

    session_key: str
    chat_id: str
    message: InboundMessage

    @property
    def reply_to(self) -> str | None:
        """The platform's id of the message, when answers can reply to it (`message.origin`)."""
        return self.message.origin.reply_to if self.message.origin else None


@dataclass(frozen=True)
class Unsupported:
    """A message Synapse cannot read (image, file, sticker, ...): it deserves a reply."""

    chat_id: str
    message_id: str | None
    message_type: str


@dataclass(frozen=True)
class Ignored:
    """A message that is not for Synapse, with the reason (logged)."""

    reason: str


Found = ChatText | Unsupported | Ignored


COURTESY_RETRY_SECONDS = (1.0, 2.0)
"""Waits between tries of a reply the platform refused for now (a 5xx, a rate limit)."""


async def courtesy(send: Callable[[], Coroutine[Any, Any, object]], what: str) -> None:
    """Send a reply that reaches no session: tried again while the platform is unavailable
    (`ApplicationError` not marked non-retryable), never raised; a failure is logged."""
    for delay in (*COURTESY_RETRY_SECONDS, None):
        try:
            await send()
            return
        except ApplicationError as err:
            if err.non_retryable or delay is None:
                log.warning("could not %s: %s", what, err)
                return
            log.info("could not %s yet (%s); trying again in %.0f s", what, err, delay)
            await asyncio.sleep(delay)
        except Exception:  # a reply is a courtesy: never fail the event for it
            log.exception("could not %s", what)
            return


class Background:
    """Work that goes on after an event is answered (replies, decisions in flight)."""

    def __init__(self) -> None:
        self.tasks: set[asyncio.Task[Any]] = set()

    def spawn(self, work: Coroutine[Any, Any, None]) -> None:
        """Run `work` on the running loop, kept until it ends."""
        task = asyncio.get_running_loop().create_task(work)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def drain(self) -> None:
        """On shutdown: give background work a moment, then stop it."""
        if self.tasks:
            _, late = await asyncio.wait(set(self.tasks), timeout=DRAIN_SECONDS)
            for task in late:
                task.cancel()


class Conversations:
    """Delivers a channel's chat messages to their sessions."""

    def __init__(
        self,
        settings: Settings,
        registry: AgentRegistry,
        *,
        channel: ChatChannel[Any, Any, Any, Any],
        background: Background,
    ) -> None:
        self._settings = settings
        self._registry = registry
        self._chat = channel
        self._channel = channel.name
        self._approvers = channel.people.admins
        self._requesters_decide = channel.people.requesters_decide
        self._reply = channel.reply
        self._background = background
        self._client: Client | None = None

    def role_of(self, user_id: str) -> Role:
        """The role of a chat user of this channel (`roles.chat_role`)."""
        return chat_role(user_id, self._approvers, requesters_decide=self._requesters_decide)

    @property
    def channel(self) -> ChatChannel[Any, Any, Any, Any]:
        """The channel these conversations are in."""
        return self._chat

    def decider(self, click: Click) -> Click:
        """The click as its clicker decides: their principal (the channel's spelling of them) and role."""
        operator = self._chat.principal(click.operator)
        return replace(click, operator=operator, role=self.role_of(operator))

    def bind(self, client: Client) -> None:
        """Attach the Temporal client (from the app's lifespan)."""
        self._client = client

    @property
    def client(self) -> Client:
        """The Temporal client (set by `bind`)."""
        if self._client is None:
            raise RuntimeError(f"the {self._channel} channel was not bound to a Temporal client")
        return self._client

    async def receive(self, found: Found, event_id: str | None) -> None:
        """Deliver a chat text to its session, answer what cannot be delivered, log what is ignored."""
        if isinstance(found, Ignored):
            log.info("%s event %s ignored: %s", self._channel, event_id, found.reason)
        elif isinstance(found, Unsupported):
            log.info(
                "%s event %s: %s messages are not supported", self._channel, event_id, found.message_type
            )
            self._background.spawn(
                self._reply(found.chat_id, found.message_id, UNSUPPORTED_TEXT, "unsupported")
            )
        else:
            limit = self._settings.limits.max_message_bytes
            size = utf8_size(found.message.content)
            if size > limit:
                log.info(
                    "%s event %s: a %d-byte message is over the %d-byte limit",
                    self._channel,
                    event_id,
                    size,
                    limit,
                )
                text = TOO_LARGE_TEXT.format(size=size, limit=limit)
                self._background.spawn(self._reply(found.chat_id, found.reply_to, text, "too-large"))
            else:
                await self._deliver(found)

    async def _deliver(self, found: ChatText) -> None:
        config = sessions.new_config(
            self._settings,
            found.session_key,
            self._registry.resolve(DEFAULT_AGENT, found.session_key),
            approvers=self._approvers,
            approve_by_requester=self._requesters_decide,
            channel=self._channel,
            chat_id=found.chat_id,
        )
        sender = self._chat.principal(found.message.sender_id)
        message = found.message.model_copy(update={"sender_id": sender, "role": self.role_of(sender)})
        # One call for a new chat's first message; a cancelled session is never started again by it.
        delivery = await sessions.deliver_once(
            self.client, self._settings.temporal.task_queue, config, message, within=MESSAGE_WAIT_SECONDS
        )
        ended = delivery.cancelled
        if ended is not None:  # not delivered, or dropped by the run still closing
            if found.message.content.strip().lower() == RESTART_COMMAND:
                self._background.spawn(self._restart(found, config, still_closing=ended.closed_at is None))
            else:
                self._background.spawn(self._tell_cancelled(found, ended))

    async def _restart(self, found: ChatText, config: SessionConfig, *, still_closing: bool) -> None:
        """`/restart` in a cancelled chat: a new conversation, once the cancelled run has closed."""
        if still_closing:  # its last deliveries drain; a start now would find it running
            await sessions.closed(self.client, found.session_key, within=CLOSING_WAIT_SECONDS)
        with contextlib.suppress(AlreadyExists):  # restarted by someone else meanwhile
            await sessions.start_session(self.client, self._settings.temporal.task_queue, config)
        await self._reply(found.chat_id, found.reply_to, RESTARTED_TEXT, "restarted")

    async def _tell_cancelled(self, found: ChatText, ended: sessions.EndedRun) -> None:
        """Answer a message to a cancelled session: who cancelled it, when, and how to go on."""
        refusal = await sessions.cancellation(
            self.client, found.session_key, ended, wait=timedelta(seconds=DRAIN_SECONDS)
        )
        text = CANCELLED_TEXT.format(
            by=f" by {refusal.by}" if refusal.by else "",
            at=sessions.when(refusal.at),
            why=f" ({refusal.reason})" if refusal.reason else "",
        )
        await self._reply(found.chat_id, found.reply_to, text, "cancelled")
