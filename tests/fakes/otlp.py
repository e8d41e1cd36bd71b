"""An OpenTelemetry collector stand-in on loopback: receives OTLP/HTTP trace exports (protobuf,
`POST /v1/traces`, as the OTLP specification shapes them) and keeps the spans for a test to read.

    collector = Collector()
    async with running(collector.app) as url:  # OTEL_EXPORTER_OTLP_ENDPOINT=url
        ...
    collector.spans  # every span received, in arrival order
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

from fastapi import FastAPI, Request, Response
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)


@dataclass(frozen=True)
class ReceivedSpan:
    """One span as exported: its service, name, ids (hex) and attributes."""

    service: str
    name: str
    trace_id: str
    span_id: str
    parent_id: str
    attributes: dict[str, object]


@dataclass
class Collector:
    """The stand-in; `app` serves `POST /v1/traces`."""

    spans: list[ReceivedSpan] = field(default_factory=list)

    @cached_property
    def app(self) -> FastAPI:
        app = FastAPI()

        @app.post("/v1/traces")
        async def export(request: Request) -> Response:
            received = ExportTraceServiceRequest.FromString(await request.body())
            for resource_spans in received.resource_spans:
                service = next(
                    (
                        a.value.string_value
                        for a in resource_spans.resource.attributes
                        if a.key == "service.name"
                    ),
                    "",
                )
                for scope_spans in resource_spans.scope_spans:
                    for span in scope_spans.spans:
                        self.spans.append(
                            ReceivedSpan(
                                service=service,
                                name=span.name,
                                trace_id=span.trace_id.hex(),
                                span_id=span.span_id.hex(),
                                parent_id=span.parent_span_id.hex(),
                                attributes={a.key: _value(a.value) for a in span.attributes},
                            )
                        )
            body = ExportTraceServiceResponse().SerializeToString()
            return Response(body, media_type="application/x-protobuf")

        return app


def _value(value: object) -> object:
    kind = value.WhichOneof("value")  # type: ignore[attr-defined]
    return getattr(value, kind) if kind else None
