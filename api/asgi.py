"""ASGI plumbing the API's middlewares share."""

from __future__ import annotations

from starlette.types import Message, Scope, Send


def route_of(scope: Scope) -> str:
    """The matched route's template (`/sessions/{key}`, never a key), or `unmatched`; known once
    the app has routed the request."""
    return getattr(scope.get("route"), "path", None) or "unmatched"


class ResponseStatus:
    """Wraps an ASGI `send` and notes the response's status (500 until a response starts)."""

    def __init__(self, send: Send) -> None:
        self._send = send
        self.status = 500

    async def __call__(self, message: Message) -> None:
        if message["type"] == "http.response.start":
            self.status = int(message["status"])
        await self._send(message)
