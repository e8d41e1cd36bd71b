"""Lark/Feishu in: the SDK's event dispatcher, and what its callbacks do with events.

One `LarkInbound` per app (kept on `app.state.lark`). The SDK's callbacks are synchronous and
run on an SDK thread: the webhook runs `dispatcher.do()` in a worker thread, the long
connection runs them on its own event loop. Each callback hands its work to the API's event
loop (where the Temporal client lives) and waits for it:
- a message is read (`messages`) and handed to `api/chat/conversations.py` before Lark gets its
  200: a text is delivered by signal-with-start, so a failure (Temporal unreachable) answers
  500 and Lark redelivers the event;
- a card click is decided and answered with a toast (see `clicks`).
Redeliveries: an event id is remembered once its message was handled (`api/chat/seen.py`:
durably, shared by every API process on the data dir) and skipped after; a message that could
not be handled is not remembered, so Lark's redelivery gets another try.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

import lark_oapi as lark
from lark_oapi.api.im.v1 import P2ImMessageReceiveV1
from lark_oapi.event.callback.model.p2_card_action_trigger import (
    P2CardActionTrigger,
    P2CardActionTriggerResponse,
)
from temporalio.client import Client

from contracts import InteractionOutcome
from core.agent_registry import AgentRegistry
from core.settings import Settings

from ..chat import clicks
from ..chat.conversations import MESSAGE_WAIT_SECONDS, Background, Conversations
from ..chat.seen import SeenEvents
from . import clicks as lark_clicks
from .channel import LarkChat
from .messages import CHANNEL

log = logging.getLogger(__name__)
T = TypeVar("T")

CLICK_WAIT_SECONDS = 2.5
"""How long a click's answer may take here: Lark drops answers after 3 s, network included."""


def _log_late_click(click: concurrent.futures.Future[Any]) -> None:
    error = None if click.cancelled() else click.exception()
    if error is not None:
        log.warning("a Lark card click answered late failed: %r", error)


class LarkInbound:
    """Turns Lark events into session messages and card clicks into decisions."""

    def __init__(self, settings: Settings, registry: AgentRegistry, bot_open_id: str | None = None) -> None:
        """Build the dispatcher; `bind` must be called from the running app before events arrive."""
        self._settings = settings
        self.chat = LarkChat(settings, bot_open_id)
        self._seen = SeenEvents(settings.data_dir)
        self._background = Background()
        self._loop: asyncio.AbstractEventLoop | None = None
        self.on_decided: Callable[[InteractionOutcome], None] | None = None
        """Hears every decision a click takes (the API's metrics)."""
        self.conversations = Conversations(settings, registry, channel=self.chat, background=self._background)
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
        self.conversations.bind(client)
        self._loop = loop

    async def dispatch(self, raw: lark.RawRequest) -> lark.RawResponse:
        """Run the SDK's dispatcher off the event loop (its callbacks come back to it)."""
        return await asyncio.to_thread(self.dispatcher.do, raw)

    async def drain(self) -> None:
        """On shutdown: give background work (replies, decisions in flight) a moment, then stop it."""
        await self._background.drain()

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

    async def on_message(self, data: P2ImMessageReceiveV1) -> None:
        """Deliver a chat message to its session (signal-with-start), once per event id."""
        event_id = data.header.event_id if data.header else None
        if event_id and await self._seen.taken(CHANNEL, event_id):
            log.info("Lark event %s was already delivered; skipped", event_id)
            return
        await self.conversations.receive(self.chat.read_message(data), event_id)
        if event_id:
            await self._seen.claim(CHANNEL, event_id)

    async def on_card_action(self, data: P2CardActionTrigger) -> dict[str, Any]:
        """Decide a card click; the callback's answer (a toast, maybe a card)."""
        click = self.chat.read_click(data)
        if isinstance(click, dict):
            return click
        click = self.conversations.decider(click)
        answer = await clicks.decide(
            self.conversations.client, click, self._background.tasks, self.on_decided
        )
        return await self.chat.answer_click(click, answer, "callback")

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
