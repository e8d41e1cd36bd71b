"""A webhook receiver on loopback: records every notification POSTed to it and checks nothing
itself (tests verify the signature), answering the statuses it is told to, then 200."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ..support import running


@dataclass
class Received:
    """One POST as it arrived."""

    headers: dict[str, str]
    body: bytes

    @property
    def json(self) -> dict[str, Any]:
        """The body, parsed."""
        parsed: dict[str, Any] = json.loads(self.body)
        return parsed


@dataclass
class WebhookReceiver:
    """What the receiver got, and how it answers."""

    url: str = ""
    received: list[Received] = field(default_factory=list)
    answers: list[int] = field(default_factory=list)
    """Statuses to answer first, in order (then 200)."""
    body: bytes = b""
    """The body of every answer."""

    def events(self) -> list[str]:
        """The events delivered (answered 2xx), in order."""
        return [r.json["event"] for r, ok in zip(self.received, self._delivered, strict=True) if ok]

    _delivered: list[bool] = field(default_factory=list)

    async def handle(self, request: Request) -> Response:
        status = self.answers.pop(0) if self.answers else 200
        self.received.append(Received(dict(request.headers), await request.body()))
        self._delivered.append(status < 300)
        return Response(self.body, status_code=status)


@asynccontextmanager
async def webhook_receiver() -> AsyncIterator[WebhookReceiver]:
    """A receiver listening on a free loopback port (`url`)."""
    receiver = WebhookReceiver()
    app = Starlette(routes=[Route("/hook", receiver.handle, methods=["POST"])])
    async with running(app) as base_url:
        receiver.url = f"{base_url}/hook"
        yield receiver
