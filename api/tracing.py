"""A span per HTTP request, when tracing is on (`core/tracing.py`).

Named by method and route template (`POST /sessions/{key}/messages`, never a key), it continues
the caller's W3C `traceparent` if there is one, and is current while the route runs: the Temporal
calls the route makes carry it into the workflow and its activities.
"""

from __future__ import annotations

from opentelemetry import context, propagate
from opentelemetry.trace import SpanKind, Status, StatusCode, Tracer, set_span_in_context
from starlette.types import ASGIApp, Receive, Scope, Send

from .asgi import ResponseStatus, route_of


class RequestSpans:
    """ASGI middleware: one server span per request."""

    def __init__(self, app: ASGIApp, tracer: Tracer) -> None:
        self.app = app
        self.tracer = tracer

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {key.decode("latin-1"): value.decode("latin-1") for key, value in scope["headers"]}
        method = str(scope["method"])
        span = self.tracer.start_span(
            method,
            context=propagate.extract(headers),
            kind=SpanKind.SERVER,
            attributes={"http.method": method},
        )
        sent = ResponseStatus(send)
        token = context.attach(set_span_in_context(span))
        try:
            await self.app(scope, receive, sent)
        finally:
            context.detach(token)
            route = route_of(scope)
            span.update_name(f"{method} {route}")
            span.set_attribute("http.route", route)
            span.set_attribute("http.status_code", sent.status)
            if sent.status >= 500:
                span.set_status(Status(StatusCode.ERROR))
            span.end()
