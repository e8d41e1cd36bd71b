"""Lark/Feishu in: the SDK's event dispatcher, and what its callbacks do with events.

One `LarkInbound` per app (kept on `app.state.lark`). The SDK's callbacks are synchronous and
run on an SDK thread: the webhook runs `dispatcher.do()` in a worker thread, the long
connection runs them on its own event loop. Each callback hands its work to the API's event
loop (where the Temporal client lives) and waits for it:
- a text message is delivered by signal-with-start before Lark gets its 200, so a failure
  (Temporal unreachable) answers 500 and Lark redelivers the event;
- a card click is decided and answered with a toast (see `lark_clicks`);
- a message to a chat whose session was cancelled starts nothing: the chat is told who cancelled
  it and when, and that `/restart` starts a new conversation there (which it then does).
Redeliveries: the last `SEEN_EVENTS_KEPT` event ids are remembered and skipped here; past that,
the session ignores a repeated Lark `message_id` anyway.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import threading
from collections import OrderedDict
from collections.abc import Coroutine
from datetime import timedelta
from typing import Any, TypeVar

import lark_oapi as lark
from lark_oapi.api.im.v1 import P2ImMessageReceiveV1
from lark_oapi.event.callback.model.p2_card_action_trigger import (
    P2CardActionTrigger,
    P2CardActionTriggerResponse,
)
from temporalio.client import Client

from activities.channels.lark.delivery import LarkActivities
from contracts import OutboundMessage, SessionConfig
from core.agent_registry import DEFAULT_AGENT, AgentRegistry
from core.settings import Settings

from ..calls import sessions
from ..calls.errors import AlreadyExists
from ..calls.sizes import utf8_size
from . import clicks as lark_clicks
from .messages import ChatText, Ignored, Unsupported, read_message

log = logging.getLogger(__name__)
T = TypeVar("T")

SEEN_EVENTS_KEPT = 1024
MESSAGE_WAIT_SECONDS = 2.5
"""How long a message callback waits for signal-with-start (Lark retries after ~3 s)."""
CLOSING_WAIT_SECONDS = 30.0
"""How long `/restart` waits for a cancelled session that is still closing (its deliveries drain)."""
CLICK_WAIT_SECONDS = 2.8
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


def _log_late_click(click: concurrent.futures.Future[Any]) -> None:
    error = None if click.cancelled() else click.exception()
    if error is not None:
        log.warning("a Lark card click answered late failed: %r", error)


class SeenEvents:
    """The most recent event ids (an LRU); touched only on the API's event loop."""

    def __init__(self, capacity: int = SEEN_EVENTS_KEPT) -> None:
        self._ids: OrderedDict[str, None] = OrderedDict()
        self._capacity = capacity

    def __contains__(self, event_id: object) -> bool:
        return event_id in self._ids

    def add(self, event_id: str) -> None:
        """Remember an id, forgetting the oldest beyond capacity."""
        self._ids[event_id] = None
        self._ids.move_to_end(event_id)
        while len(self._ids) > self._capacity:
            self._ids.popitem(last=False)


class LarkInbound:
    """Turns Lark events into session messages and card clicks into decisions."""

    def __init__(self, settings: Settings, registry: AgentRegistry, bot_open_id: str | None = None) -> None:
        """Build the dispatcher; `bind` must be called from the running app before events arrive."""
        self._settings = settings
        self._registry = registry
        self._approvers = settings.lark.admin_ids
        self._bot_open_id = bot_open_id
        self._seen = SeenEvents()
        self._tasks: set[asyncio.Task[Any]] = set()
        self._client: Client | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._outbound = LarkActivities(settings)  # the SDK client the session deliveries use
        self.dispatcher: lark.EventDispatcherHandler = (
            lark.EventDispatcherHandler.builder(
                settings.lark.encrypt_key or "", settings.lark.verification_token or ""
            )
            .register_p2_im_message_receive_v1(self._on_message)
            .register_p2_card_action_trigger(self._on_card_action)
            .build()
        )

    def bind(self, client: Client, loop: asyncio.AbstractEventLoop) -> None:
        """Attach the Temporal client and the loop it runs on (from the app's lifespan)."""
        self._client, self._loop = client, loop

    async def dispatch(self, raw: lark.RawRequest) -> lark.RawResponse:
        """Run the SDK's dispatcher off the event loop (its callbacks come back to it)."""
        return await asyncio.to_thread(self.dispatcher.do, raw)

    async def drain(self) -> None:
        """On shutdown: give background work (replies, decisions in flight) a moment, then stop it."""
        if self._tasks:
            _, late = await asyncio.wait(set(self._tasks), timeout=DRAIN_SECONDS)
            for task in late:
                task.cancel()

    # ---------------------------------------------------------- SDK callbacks (SDK thread)

    def _submit(self, work: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        if self._loop is None:
            work.close()
            raise RuntimeError("the Lark channel received an event before the API finished starting")
        return asyncio.run_coroutine_threadsafe(work, self._loop)

    def _on_message(self, data: P2ImMessageReceiveV1) -> None:
        self._submit(self.on_message(data)).result(MESSAGE_WAIT_SECONDS)

    def _on_card_action(self, data: P2CardActionTrigger) -> P2CardActionTriggerResponse:
        """The click's answer within Lark's window; past it (a starved API), "still applying": the
        decision goes on, and a redelivered click would only be refused as already decided."""
        click = self._submit(self.on_card_action(data))
        try:
            return P2CardActionTriggerResponse(click.result(CLICK_WAIT_SECONDS))
        except TimeoutError:
            click.add_done_callback(_log_late_click)
            return P2CardActionTriggerResponse(lark_clicks.still_applying())

    # ---------------------------------------------------------- the work (API event loop)

    @property
    def client(self) -> Client:
        """The Temporal client (set by `bind`)."""
        if self._client is None:
            raise RuntimeError("LarkInbound.bind() was not called")
        return self._client

    async def on_message(self, data: P2ImMessageReceiveV1) -> None:
        """Deliver a chat message to its session (signal-with-start), once per event id."""
        event_id = data.header.event_id if data.header else None
        if event_id and event_id in self._seen:
            log.info("Lark event %s was already delivered; skipped", event_id)
            return
        found = read_message(data, self._bot_open_id)
        if isinstance(found, Ignored):
            log.info("Lark event %s ignored: %s", event_id, found.reason)
        elif isinstance(found, Unsupported):
            log.info("Lark event %s: %s messages are not supported", event_id, found.message_type)
            self._spawn(self._reply(found.chat_id, found.message_id, UNSUPPORTED_TEXT, "unsupported"))
        elif isinstance(found, ChatText):
            limit = self._settings.limits.max_message_bytes
            size = utf8_size(found.message.content)
            if size > limit:
                log.info("Lark event %s: a %d-byte message is over the %d-byte limit", event_id, size, limit)
                text = TOO_LARGE_TEXT.format(size=size, limit=limit)
                self._spawn(
                    self._reply(
                        found.chat_id, found.message.metadata.get("lark_message_id"), text, "too-large"
                    )
                )
            else:
                await self._deliver(found)
        if event_id:
            self._seen.add(event_id)

    async def _deliver(self, found: ChatText) -> None:
        config = SessionConfig(
            session_key=found.session_key,
            agent=self._registry.resolve(DEFAULT_AGENT, found.session_key),
            approvers=self._approvers,
            approve_by_requester=True,
            channel="lark",
            chat_id=found.chat_id,
        )
        ended = await sessions.ended_run(self.client, found.session_key)
        if ended is not None and ended.cancelled:  # a message would silently start a new run
            if found.message.content.strip().lower() == RESTART_COMMAND:
                self._spawn(self._restart(found, config, still_closing=ended.closed_at is None))
            else:
                self._spawn(self._tell_cancelled(found, ended))
            return
        await sessions.send_message(
            self.client,
            self._settings.temporal.task_queue,
            config,
            found.message,
            within=MESSAGE_WAIT_SECONDS,
        )

    async def _restart(self, found: ChatText, config: SessionConfig, *, still_closing: bool) -> None:
        """`/restart` in a cancelled chat: a new conversation, once the cancelled run has closed."""
        if still_closing:  # its last deliveries drain; a start now would find it running
            await sessions.closed(self.client, found.session_key, within=CLOSING_WAIT_SECONDS)
        with contextlib.suppress(AlreadyExists):  # restarted by someone else meanwhile
            await sessions.start_session(self.client, self._settings.temporal.task_queue, config)
        reply_to = found.message.metadata.get("lark_message_id")
        await self._reply(found.chat_id, reply_to, RESTARTED_TEXT, "restarted")

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
        await self._reply(found.chat_id, found.message.metadata.get("lark_message_id"), text, "cancelled")

    async def _reply(self, chat_id: str, message_id: Any, text: str, why: str) -> None:
        """Answer a message that reaches no session (unsupported, too large, cancelled) in its chat."""
        reply_to = message_id if isinstance(message_id, str) else None
        reply = OutboundMessage(channel="lark", chat_id=chat_id, kind="text", text=text, reply_to=reply_to)
        try:
            # The key makes Lark keep one reply per message, however often the event is redelivered.
            await asyncio.to_thread(self._outbound._deliver, reply, f"{why}/{reply_to}")
        except Exception:  # a reply is a courtesy: never fail (or retry) the event for it
            log.exception("could not tell Lark chat %s why a message was not delivered (%s)", chat_id, why)

    def _spawn(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def on_card_action(self, data: P2CardActionTrigger) -> dict[str, Any]:
        """Decide a card click; the callback's answer (a toast, maybe a card)."""
        click = lark_clicks.read_click(data)
        if isinstance(click, dict):
            return click
        return await lark_clicks.decide(self.client, click, self._tasks, self._settings)

    # ---------------------------------------------------------- long connection

    def long_connection(self) -> lark.ws.Client:
        """The SDK's long-connection client for `LARK_MODE=websocket` (not started)."""
        return lark.ws.Client(
            self._settings.lark.app_id or "",
            self._settings.lark.app_secret or "",
            event_handler=self.dispatcher,
            domain=self._settings.lark.domain,
            log_level=lark.LogLevel.INFO,
        )

    def start_long_connection(self) -> asyncio.AbstractEventLoop:
        """Run the long connection in a daemon thread on its own loop; return that loop (to stop it)."""
        from lark_oapi.ws import client as ws_module

        ws_client = self.long_connection()
        ws_loop = asyncio.new_event_loop()

        def run() -> None:
            asyncio.set_event_loop(ws_loop)
            # The SDK keeps the loop it runs on in a module global taken at import time (the
            # API's own loop here); point it at this thread's loop. One long connection per process.
            ws_module.loop = ws_loop
            try:
                ws_client.start()
            except RuntimeError:  # the loop was stopped on shutdown
                log.info("Lark long connection stopped")
            except Exception:
                log.exception("Lark long connection failed")

        threading.Thread(target=run, name="lark-long-connection", daemon=True).start()
        return ws_loop
