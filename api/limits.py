"""Limits at the door: nothing larger than configured reaches a workflow (413 instead).

Two layers. `BodyLimit` (ASGI middleware) refuses any request body over
`SYNAPSE_MAX_REQUEST_BYTES` before it is read whole (`SYNAPSE_MAX_ARTIFACT_BYTES` for artifact
uploads). `calls.sizes.check_size` then holds each field to its own limit (a message, a comment)
and raises `TooLarge`, which `api/errors.py` answers with 413 naming the limit, the size and the
variable.
"""

from __future__ import annotations

from collections.abc import Callable

from starlette.exceptions import HTTPException
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .calls.sizes import TooLarge

ARTIFACT_UPLOAD_PATH = "/artifacts"
MESSAGE_HINT = "Store large text with POST /artifacts and send its artifact id instead"


class BodyLimit:
    """ASGI middleware: 413 for a request body over its limit, read or declared.

    A `Content-Length` over the limit is refused before anything is read; a chunked body is
    counted as it arrives and refused as soon as it passes the limit.
    """

    def __init__(self, app: ASGIApp, limit_for: Callable[[str, str], tuple[int, str, str]]) -> None:
        """`limit_for(method, path)` gives the byte limit, the variable that sets it and a hint."""
        self.app = app
        self.limit_for = limit_for

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] in ("GET", "HEAD", "OPTIONS"):
            await self.app(scope, receive, send)
            return
        limit, variable, hint = self.limit_for(scope["method"], scope["path"])
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            refused = TooLarge("the request body", int(declared), limit, variable, hint)
            await JSONResponse({"detail": str(refused)}, status_code=413)(scope, receive, send)
            return
        seen = 0

        async def counted() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit:
                    # An HTTPException passes FastAPI's body parsing untouched and becomes the 413.
                    raise HTTPException(413, str(TooLarge("the request body", seen, limit, variable, hint)))
            return message

        await self.app(scope, counted, send)
