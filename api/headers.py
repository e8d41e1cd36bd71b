"""Security headers on every response the API sends: routes, errors, 404s, the console, the docs.

- `X-Content-Type-Options: nosniff`: a browser takes a response for what its type says, never
  for HTML it guesses from the bytes;
- `Referrer-Policy: no-referrer`: a console URL (a session key, an interaction id) leaks to no
  other site;
- `Content-Security-Policy` with `frame-ancestors 'none'`, and `X-Frame-Options: DENY` for older
  browsers: no other site puts the console in a frame to click through it;
- `Strict-Transport-Security` when `SYNAPSE_PUBLIC_URL` is `https://`.
A response that brings its own policy (the console's, the docs', an artifact's) keeps it, with
`frame-ancestors 'none'` added when it has none; every other response gets `API_POLICY`, which
allows nothing at all: JSON is not a page.

A pure ASGI middleware, not Starlette's `BaseHTTPMiddleware`: it rewrites the first message of a
response and passes every other one through as it comes, so an SSE stream keeps streaming.
`install` puts it around the whole app, Starlette's error middleware included, so the 500 that
middleware writes carries the headers too.
"""

from __future__ import annotations

from collections.abc import Callable

from fastapi import FastAPI
from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

FRAME_ANCESTORS = "frame-ancestors 'none'"
API_POLICY = f"default-src 'none'; {FRAME_ANCESTORS}"
"""The policy of a response that sets none: loads nothing, runs nothing, is framed nowhere."""
HSTS = "max-age=31536000; includeSubDomains"
BASELINE = {
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
}
"""Headers every response carries, whatever it set itself."""


def framed_nowhere(policy: str) -> str:
    """`policy` with `frame-ancestors 'none'` added unless it names its own frame ancestors."""
    if "frame-ancestors" in policy.lower():
        return policy
    return f"{policy.rstrip().rstrip(';')}; {FRAME_ANCESTORS}"


class SecurityHeaders:
    """Adds the security headers to the start of every HTTP response of the app it wraps."""

    def __init__(self, app: ASGIApp, *, hsts: bool = False) -> None:
        self.app = app
        self.headers = {**BASELINE, **({"Strict-Transport-Security": HSTS} if hsts else {})}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in self.headers.items():
                    headers[name] = value
                policy = headers.get("content-security-policy")
                headers["Content-Security-Policy"] = framed_nowhere(policy) if policy else API_POLICY
            await send(message)

        await self.app(scope, receive, send_with_headers)


class WithPolicy:
    """An ASGI app (a static mount) whose responses carry `policy` as their Content-Security-Policy."""

    def __init__(self, app: ASGIApp, policy: str) -> None:
        self.app = app
        self.policy = policy

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def send_with_policy(message: Message) -> None:
            if message["type"] == "http.response.start":
                MutableHeaders(scope=message)["Content-Security-Policy"] = self.policy
            await send(message)

        await self.app(scope, receive, send_with_policy)


def install(app: FastAPI, *, public_url: str | None) -> None:
    """Wrap the whole app (Starlette's outermost error middleware too) in `SecurityHeaders`;
    HSTS when `public_url` is `https://`."""
    hsts = bool(public_url) and str(public_url).lower().startswith("https://")
    build: Callable[[], ASGIApp] = app.build_middleware_stack

    def build_with_headers() -> ASGIApp:
        return SecurityHeaders(build(), hsts=hsts)

    app.build_middleware_stack = build_with_headers  # type: ignore[method-assign]
