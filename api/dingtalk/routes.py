"""DingTalk endpoints and the Stream connection, mounted by `create_app` only when the channel is on.

`DINGTALK_MODE=stream` (the default): bot messages and card clicks arrive over the Stream
connection (`stream`), which needs no public URL. `DINGTALK_MODE=webhook`: bot messages are
POSTed to `/channels/dingtalk/events`, signed, at most 5 minutes old, each signed `timestamp` +
`sign` pair accepted once (`webhook`); card clicks still arrive over Stream (DingTalk sends clicks
of `callbackType: "STREAM"` cards only there), so the connection subscribes to them alone. The
route takes no API key: DingTalk cannot send one; its signature is the credential.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from dingtalk_stream import ChatbotMessage
from dingtalk_stream.card_callback import Card_Callback_Router_Topic
from fastapi import APIRouter, FastAPI, HTTPException, Request

from core.settings import Settings

from ..chat.seen import SeenEvents
from . import webhook
from .inbound import DingTalkInbound
from .stream import Handler, StreamConnection


@asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[None]:
    """Bind the channel to the Temporal client; keep the Stream connection open while the app runs."""
    inbound: DingTalkInbound = app.state.dingtalk
    inbound.bind(app.state.client)
    connection: StreamConnection = app.state.dingtalk_stream
    running = asyncio.get_running_loop().create_task(connection.run(), name="dingtalk-stream")
    try:
        yield
    finally:
        running.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await running
        await inbound.drain()


router = APIRouter(prefix="/channels/dingtalk", tags=["dingtalk"], lifespan=lifespan)


def install(app: FastAPI, settings: Settings) -> None:
    """Check the settings, create the channel (`app.state.dingtalk`) and its connection, mount its routes."""
    settings.dingtalk.check()
    inbound = DingTalkInbound(settings, app.state.registry)
    inbound.on_decided = app.state.metrics.decided
    topics = {Card_Callback_Router_Topic: Handler(inbound.accept_click)}
    if settings.dingtalk.mode == "stream":
        topics[ChatbotMessage.TOPIC] = Handler(inbound.accept_frame)
    else:
        app.state.dingtalk_webhook = webhook.Webhook(
            settings.dingtalk.client_secret or "", SeenEvents(settings.data_dir)
        )
    app.state.dingtalk = inbound
    app.state.dingtalk_stream = StreamConnection(settings, topics)
    app.include_router(router)


def status(app: FastAPI) -> dict[str, Any] | None:
    """The channel's state for `GET /healthz` (None when it is off)."""
    connection: StreamConnection | None = getattr(app.state, "dingtalk_stream", None)
    if connection is None:
        return None
    settings: Settings = app.state.settings
    return {**connection.status.as_dict(), "mode": settings.dingtalk.mode}


RESPONSES: dict[int | str, dict[str, str]] = {
    400: {"description": "The body is not a JSON object."},
    401: {
        "description": (
            "The signature is missing, stale (over 5 minutes from now), does not match, or its "
            "timestamp and sign were already used (a replay: the signature does not cover the body); "
            "nothing was done."
        )
    },
    404: {"description": "DINGTALK_MODE is stream: messages do not come over HTTP."},
}


@router.post("/events", responses=RESPONSES)
async def events(request: Request) -> dict[str, Any]:
    """A bot message (webhook mode): checked (signature, age, not a replay), acknowledged at once,
    delivered to its session after."""
    settings: Settings = request.app.state.settings
    if settings.dingtalk.mode != "webhook":
        raise HTTPException(
            404, f"DINGTALK_MODE is {settings.dingtalk.mode!r}: bot messages arrive over Stream, not here"
        )
    checks: webhook.Webhook = request.app.state.dingtalk_webhook
    payload = await checks.admit(await request.body(), request.headers)
    request.app.state.dingtalk.accept_message(payload)
    return {}
