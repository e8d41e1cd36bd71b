"""OpenTelemetry traces: one trace from the HTTP request through its workflow to the activities it
runs, exported over OTLP/HTTP to a collector stand-in on loopback (`tests/fakes/otlp.py`)."""

from __future__ import annotations

import asyncio
from collections import defaultdict

from temporalio.client import Client

from api.main import create_app
from core.settings import Settings
from core.tracing import Tracing
from tests.fakes.otlp import Collector, ReceivedSpan
from tests.support import asked, running, serve
from worker import build_worker

from .test_sessions import ask_for_delete, decide, new_key


def test_tracing_is_off_without_an_otlp_endpoint() -> None:
    assert Tracing.from_env("synapse-api", env={}) is None
    assert Tracing.from_env("synapse-api", env={"OTEL_SERVICE_NAME": "x"}) is None


async def test_a_request_is_traced_through_its_workflow_to_its_activities(
    client: Client, settings: Settings
) -> None:
    collector = Collector()
    async with running(collector.app) as collector_url:
        tracing = Tracing.from_env("synapse-test", env={"OTEL_EXPORTER_OTLP_ENDPOINT": collector_url})
        assert tracing is not None
        traced = Client(
            client.service_client,
            namespace=client.namespace,
            data_converter=client.data_converter,
            interceptors=tracing.interceptors(),
        )
        async with (
            build_worker(traced, settings),
            serve(create_app(settings, client=traced, tracing=tracing)) as http,
        ):
            key = new_key()
            request = await ask_for_delete(http, key)
            decided = await decide(http, key, asked(request).interaction_id, approved=True)
            assert decided.status_code == 200, decided.text
        await asyncio.to_thread(tracing.provider.force_flush)  # the collector answers on this loop
        tracing.shutdown()
    traces: dict[str, list[ReceivedSpan]] = defaultdict(list)
    for span in collector.spans:
        traces[span.trace_id].append(span)

    message = trace_of(traces, "POST /sessions/{key}/messages")
    names = [span.name for span in message]
    for step in (
        "SignalWithStartWorkflow:SessionWorkflow",
        "RunWorkflow:SessionWorkflow",
        "RunActivity:agent_step",  # the demo agent's quick step, which assesses the call it proposes
        "RunActivity:run_tool",  # the approved statement, in the trace of the turn that asked for it
    ):
        assert step in names, (step, names)
    decision = [span.name for span in trace_of(traces, "POST /sessions/{key}/interactions/{interaction_id}")]
    assert "StartWorkflowUpdate:decide_checked" in decision, decision
    assert {span.service for span in collector.spans} == {"synapse-test"}
    assert not any(key in span.name for span in collector.spans), "span names carry route templates, not keys"


def trace_of(traces: dict[str, list[ReceivedSpan]], root: str) -> list[ReceivedSpan]:
    """The one trace whose root span (no parent) is named `root`."""
    found = [spans for spans in traces.values() if any(s.name == root and not s.parent_id for s in spans)]
    assert len(found) == 1, (root, {t: [s.name for s in spans] for t, spans in traces.items()})
    return found[0]
