"""DingTalk Stream mode: the connection to DingTalk's gateway, opened, kept open and reopened after drops.

Built on the official SDK (`dingtalk-stream`): its `DingTalkStreamClient` routes each frame to the
handler of its topic and sends the handler's ack back on the socket. This module owns the
connection itself, which the SDK's `start()` cannot report on or stop:
- `POST <DINGTALK_OPENAPI_ENDPOINT>/v1.0/gateway/connections/open` with the app's credentials and
  the topics subscribed gives a WebSocket endpoint and a one-time ticket (the SDK reads its
  endpoint when it is imported; here it comes from the settings, so a test's stand-in works too);
- the socket is read until it closes (a `SYSTEM` `disconnect` frame closes it too); then the
  connection is opened again after 1 s, doubling to 30 s while it keeps failing;
- `status()` says how it is: `connecting`, `open`, `reconnecting` (with the last error) or
  `stopped`, shown in `GET /healthz`.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote_plus

import httpx
import websockets
from dingtalk_stream import AckMessage, CallbackHandler, Credential, DingTalkStreamClient
from dingtalk_stream.frames import CallbackMessage

from core.settings import Settings
from core.tls import tls_context

log = logging.getLogger(__name__)

OPEN_PATH = "/v1.0/gateway/connections/open"
FIRST_DELAY_SECONDS = 1.0
MAX_DELAY_SECONDS = 30.0
OPEN_TIMEOUT_SECONDS = 10.0


class Handler(CallbackHandler):  # type: ignore[misc]  # the SDK has no type hints
    """Acks a frame at once and hands it on: a slow Temporal call never holds an ack."""

    def __init__(self, accept: Callable[[CallbackMessage], None]) -> None:
        super().__init__()
        self._accept = accept

    async def process(self, message: CallbackMessage) -> tuple[int, Any]:
        """Hand the frame on; ack it."""
        self._accept(message)
        return AckMessage.STATUS_OK, {}


@dataclass
class ConnectionStatus:
    """How the Stream connection is, for `GET /healthz`."""

    state: str = "connecting"
    since: datetime | None = None
    opened: int = 0
    """Connections opened since the API started (more than 1: it was reopened)."""
    last_error: str | None = None

    def become(self, state: str, error: str | None = None) -> None:
        """Move to `state` now (keeping the last error unless a new one is given)."""
        self.state, self.since = state, datetime.now(UTC)
        if error is not None:
            self.last_error = error

    def as_dict(self) -> dict[str, Any]:
        """The status as JSON."""
        return {
            "mode": "stream",
            "state": self.state,
            "since": self.since.isoformat() if self.since else None,
            "connections_opened": self.opened,
            "last_error": self.last_error,
        }


class _Client(DingTalkStreamClient):  # type: ignore[misc]  # the SDK has no type hints
    """The SDK's client, opening its connection at the configured endpoint."""

    def __init__(self, credential: Credential, endpoint: str) -> None:
        super().__init__(credential, logger=logging.getLogger("dingtalk_stream.client"))
        self.endpoint = endpoint.rstrip("/")

    def open_connection(self) -> dict[str, Any]:
        """The WebSocket endpoint and ticket for a new connection (raises with the gateway's reason)."""
        topics = [{"type": "CALLBACK", "topic": topic} for topic in self.callback_handler_map]
        body = {
            "clientId": self.credential.client_id,
            "clientSecret": self.credential.client_secret,
            "subscriptions": topics,
            "ua": "synapse",
            "localIp": "",
        }
        with httpx.Client(timeout=OPEN_TIMEOUT_SECONDS, verify=tls_context()) as http:
            response = http.post(f"{self.endpoint}{OPEN_PATH}", json=body)
        if response.status_code != 200:
            raise ConnectionError(
                f"the gateway refused to open a connection: HTTP {response.status_code}: {response.text[:300]}"
            )
        answer = response.json()
        if not isinstance(answer, dict) or not answer.get("endpoint") or not answer.get("ticket"):
            raise ConnectionError(f"the gateway's answer has no endpoint and ticket: {response.text[:300]}")
        return answer


class StreamConnection:
    """One Stream connection with its handlers by topic; `run` keeps it open until cancelled."""

    def __init__(self, settings: Settings, handlers: dict[str, CallbackHandler]) -> None:
        credential = Credential(settings.dingtalk.client_id, settings.dingtalk.client_secret)
        self._client = _Client(credential, settings.dingtalk.openapi_endpoint)
        for topic, handler in handlers.items():
            self._client.register_callback_handler(topic, handler)
        self.status = ConnectionStatus()
        self._frames: set[asyncio.Task[Any]] = set()

    async def run(self) -> None:
        """Open the connection and read it; reopen it after every drop, with backoff; until cancelled."""
        self._client.pre_start()
        delay = FIRST_DELAY_SECONDS
        while True:
            try:
                connection = await asyncio.to_thread(self._client.open_connection)
                uri = f"{connection['endpoint']}?ticket={quote_plus(str(connection['ticket']))}"
                async with websockets.connect(uri) as socket:
                    self._client.websocket = socket
                    self.status.opened += 1
                    self.status.become("open")
                    log.info("DingTalk Stream connection open (%d so far)", self.status.opened)
                    delay = FIRST_DELAY_SECONDS
                    async for raw in socket:
                        self._route(raw)
                self.status.become("reconnecting", "the gateway closed the connection")
            except asyncio.CancelledError:
                self.status.become("stopped")
                raise
            except Exception as err:  # a refused open, a dropped socket: try again
                self.status.become("reconnecting", f"{type(err).__name__}: {err}")
                log.warning(
                    "DingTalk Stream connection: %s; reopening in %.0f s", self.status.last_error, delay
                )
            await asyncio.sleep(delay)
            delay = min(delay * 2, MAX_DELAY_SECONDS)

    def _route(self, raw: str | bytes) -> None:
        try:
            frame = json.loads(raw)
        except ValueError:
            log.warning("DingTalk Stream frame is not JSON; skipped: %r", raw[:200])
            return
        if not isinstance(frame, dict):
            log.warning("DingTalk Stream frame is not a JSON object; skipped")
            return
        task = asyncio.get_running_loop().create_task(self._client.background_task(frame))
        self._frames.add(task)
        task.add_done_callback(self._frames.discard)
