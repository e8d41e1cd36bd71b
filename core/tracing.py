"""OpenTelemetry traces: an API request, the workflow it reaches, the activities that workflow runs.

On when the standard variables name an OTLP endpoint (`OTEL_EXPORTER_OTLP_ENDPOINT` or
`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`), off when neither is set. Spans go over OTLP/HTTP; the
exporter reads the rest of the standard variables itself (`OTEL_EXPORTER_OTLP_HEADERS`, timeouts,
TLS), and the resource takes `OTEL_SERVICE_NAME` and `OTEL_RESOURCE_ATTRIBUTES` (the service name
defaults to the part: `synapse-api`, `synapse-worker`).

The Temporal client carries the SDK's `TracingInterceptor` (`temporalio.contrib.opentelemetry`):
each start, signal, update and query it sends carries the current span in its headers, and a
worker built on that client continues the trace in the workflow and in its activities. The API
opens a span per request (`api/tracing.py`) and continues a caller's `traceparent`. Nothing is
made global: the provider belongs to the process part that made it, so tests can run several.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from opentelemetry.sdk.resources import SERVICE_NAME, Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.trace import Tracer
from temporalio.client import Interceptor
from temporalio.contrib.opentelemetry import TracingInterceptor

ENDPOINT_VARIABLES = ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")


@dataclass
class Tracing:
    """One part's tracer provider, exporting to the OTLP endpoint."""

    provider: TracerProvider

    @classmethod
    def from_env(cls, service: str, env: Mapping[str, str] | None = None) -> Tracing | None:
        """Tracing for the part named `service` when an OTLP endpoint is set; None when off."""
        env = os.environ if env is None else env
        traces, base = (env.get(name) for name in ENDPOINT_VARIABLES)
        if not traces and not base:
            return None
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        endpoint = traces or f"{(base or '').rstrip('/')}/v1/traces"  # as the SDK composes them
        resource = Resource.create({SERVICE_NAME: env.get("OTEL_SERVICE_NAME") or service})
        provider = TracerProvider(resource=resource)
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=endpoint)))
        return cls(provider)

    @property
    def tracer(self) -> Tracer:
        return self.provider.get_tracer("synapse")

    def interceptors(self) -> list[Interceptor]:
        """For `Client.connect`: the client's calls, and any worker built on it, traced."""
        return [TracingInterceptor(self.tracer)]

    def shutdown(self) -> None:
        """Send what is buffered and stop."""
        self.provider.shutdown()
