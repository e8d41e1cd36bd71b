"""The API's Prometheus metrics (`GET /metrics`): requests, and the decisions people took through it.

One registry per app. `synapse_http_requests_total{method, route, status}` counts every request by
its route template (`/sessions/{key}`: bounded labels, no session keys); the duration histogram
leaves out event streams, which stay open for as long as someone watches.
`synapse_decisions_total{outcome, channel}` counts decisions taken through this API (HTTP, card
clicks), named as `workflows/supervision/metrics.outcome_label` names them. The workflow's own
metrics (every decision, chat replies and timeouts included, and approval wait times) are the
worker's (`workflows/supervision/metrics.py`, served at SYNAPSE_WORKER_METRICS_ADDRESS).
"""

from __future__ import annotations

import time

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from starlette.types import ASGIApp, Receive, Scope, Send

from contracts import InteractionOutcome
from workflows.supervision.metrics import outcome_label

from .asgi import ResponseStatus, route_of

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


class ApiMetrics:
    """The API's metrics and their registry."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter(
            "synapse_http_requests",
            "HTTP requests answered.",
            ["method", "route", "status"],
            registry=self.registry,
        )
        self.latency = Histogram(
            "synapse_http_request_seconds",
            "Time to answer a request (event streams left out).",
            ["method", "route"],
            registry=self.registry,
        )
        self.decisions = Counter(
            "synapse_decisions",
            "Decisions taken through this API.",
            ["outcome", "channel"],
            registry=self.registry,
        )

    def decided(self, outcome: InteractionOutcome) -> None:
        """Count one decision (named as the worker's metrics name it)."""
        question = outcome.response_data is not None and "text" in outcome.response_data
        self.decisions.labels(outcome_label(outcome, question=question), outcome.channel or "unknown").inc()

    def exposition(self) -> bytes:
        """The metrics in Prometheus' text format."""
        return generate_latest(self.registry)


class RequestMetrics:
    """ASGI middleware: counts requests by route template and status, and times them."""

    def __init__(self, app: ASGIApp, metrics: ApiMetrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        sent = ResponseStatus(send)
        try:
            await self.app(scope, receive, sent)
        finally:
            route = route_of(scope)
            method = str(scope["method"])
            self.metrics.requests.labels(method, route, str(sent.status)).inc()
            if not route.endswith("/events"):
                self.metrics.latency.labels(method, route).observe(time.perf_counter() - started)
