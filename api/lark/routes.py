"""Lark/Feishu webhook endpoints: events and card callbacks, verified and dispatched by the SDK.

Mounted by `create_app` only when the channel is on (`LARK_APP_ID` set), through `install`.
`POST /channels/lark/events` takes `im.message.receive_v1` events and the url_verification
challenge; `POST /channels/lark/card` takes `card.action.trigger` callbacks. Both go through the
same dispatcher, so one URL configured for both in the Lark console works too. A request that
fails the encrypt key / signature / token check is answered 401 and dispatches nothing; an event
type Synapse does not handle is acknowledged (200) so Lark stops redelivering it. These
routes take no API key: Lark cannot send one; its signature is the credential.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Annotated

from fastapi import APIRouter, Depends, FastAPI, HTTPException, Request
from fastapi.responses import JSONResponse, Response
from lark_oapi import RawRequest

from core.settings import Settings

from . import webhook as lark_webhook
from .inbound import LarkInbound

log = logging.getLogger(__name__)

MODES = ("webhook", "websocket")


class LarkConfigError(ValueError):
    """The Lark channel is on but cannot work with the configured settings."""


def check_settings(settings: Settings) -> None:
    """Fail at startup, naming the environment variables to set, when the channel cannot work."""
    if settings.lark.mode not in MODES:
        raise LarkConfigError(f"LARK_MODE is {settings.lark.mode!r}; expected one of {', '.join(MODES)}")
    required = {"LARK_APP_SECRET": settings.lark.app_secret}
    if settings.lark.mode == "webhook":
        required["LARK_VERIFICATION_TOKEN"] = settings.lark.verification_token
    missing = [name for name, value in required.items() if not value]
    if missing:
        raise LarkConfigError(
            f"the Lark channel is on (LARK_APP_ID is set) but {' and '.join(missing)} "
            f"{'is' if len(missing) == 1 else 'are'} not set; set them from the app's page in the "
            "Lark/Feishu developer console, or unset LARK_APP_ID to turn the channel off"
        )
    if settings.lark.mode == "webhook" and not settings.lark.encrypt_key:
        log.warning(
            "LARK_ENCRYPT_KEY is not set: Lark events are checked by their verification token only, "
            "not signed; set an encrypt key in the developer console and here"
        )


@asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[None]:
    """Bind the channel to the Temporal client; run the long connection in websocket mode."""
    inbound: LarkInbound = app.state.lark
    settings: Settings = app.state.settings
    inbound.bind(app.state.client, asyncio.get_running_loop())
    ws_loop = inbound.start_long_connection() if settings.lark.mode == "websocket" else None
    try:
        yield
    finally:
        if ws_loop is not None:
            ws_loop.call_soon_threadsafe(ws_loop.stop)
        await inbound.drain()


router = APIRouter(prefix="/channels/lark", tags=["lark"], lifespan=lifespan)


def install(app: FastAPI, settings: Settings) -> None:
    """Check the settings, create the channel (`app.state.lark`) and mount its routes."""
    check_settings(settings)
    # The bot's open_id is not configured, so any mention in a group counts (see lark_messages).
    app.state.lark = LarkInbound(settings, app.state.registry, bot_open_id=settings.lark.bot_open_id)
    app.state.lark.on_decided = app.state.metrics.decided
    app.include_router(router)


@dataclass(frozen=True)
class LarkRequest:
    """An authenticated Lark request: the SDK's `RawRequest` and what it carries."""

    raw: RawRequest
    event_type: str | None


async def verified_lark_request(request: Request) -> LarkRequest:
    """The request for the SDK, once its encryption, signature and token check out (else 401)."""
    settings: Settings = request.app.state.settings
    if settings.lark.mode != "webhook":
        raise HTTPException(
            404, f"LARK_MODE is {settings.lark.mode!r}: Lark events arrive over the long connection, not here"
        )
    body = await request.body()
    payload = lark_webhook.authenticate(
        body,
        request.headers,
        encrypt_key=settings.lark.encrypt_key or "",
        verification_token=settings.lark.verification_token or "",
    )
    raw = lark_webhook.raw_request(request.url.path, body, request.headers)
    return LarkRequest(raw, lark_webhook.event_type(payload))


VerifiedLarkRequest = Annotated[LarkRequest, Depends(verified_lark_request)]
HANDLED = frozenset({"url_verification", "im.message.receive_v1", "card.action.trigger"})
RESPONSES: dict[int | str, dict[str, str]] = {
    400: {"description": "The body is not a JSON object."},
    401: {"description": "Encrypt key, signature or verification token do not match; nothing was done."},
    404: {"description": "LARK_MODE is websocket: events do not come over HTTP."},
    500: {"description": "The event could not be handed to Temporal in time; Lark redelivers it."},
}


async def _dispatch(request: Request, lark_request: LarkRequest) -> Response:
    if lark_request.event_type not in HANDLED:
        # Answered 200 so Lark does not redeliver an event the app was subscribed to by mistake.
        log.info("Lark event of type %s ignored: Synapse does not handle it", lark_request.event_type)
        return JSONResponse({"msg": f"ignored: Synapse does not handle {lark_request.event_type} events"})
    answer = await request.app.state.lark.dispatch(lark_request.raw)
    if answer.status_code == 200:
        return lark_webhook.to_response(answer)
    reason = (answer.content or b"").decode(errors="replace")
    log.warning("Lark %s event failed: %s", lark_request.event_type, reason)
    return JSONResponse(
        status_code=500,
        content={
            "detail": f"the {lark_request.event_type} event could not be handled now ({reason}); "
            "Lark redelivers it"
        },
    )


@router.post("/events", responses=RESPONSES)
async def events(request: Request, lark_request: VerifiedLarkRequest) -> Response:
    """Lark event subscription: answers url_verification, delivers chat messages to sessions."""
    return await _dispatch(request, lark_request)


@router.post("/card", responses=RESPONSES)
async def card(request: Request, lark_request: VerifiedLarkRequest) -> Response:
    """Card callbacks: an Approve/Deny click decides the request; answered with a toast."""
    return await _dispatch(request, lark_request)
