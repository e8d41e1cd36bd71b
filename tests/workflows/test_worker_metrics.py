"""The worker's Prometheus endpoint: the SDK's `temporal_*` metrics and Synapse's own, from the workflow
(requests opened and decided, approval wait) and the tool activity (runs by tool and result)."""

from __future__ import annotations

import uuid

import httpx
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.samples import Sample
from temporalio.client import Client

from api.calls import sessions as session_calls
from contracts import InboundMessage, InteractionResponse, SessionConfig
from core.connect import metrics_runtime
from core.settings import Settings, TemporalSettings
from tests.conftest import assert_eventually
from tests.support import free_port
from worker import build_worker
from workflows.identity.ids import session_workflow_id
from workflows.session import SessionWorkflow

DELETE_CANCELLED = "DELETE FROM orders WHERE status = 'cancelled'"


async def test_the_worker_serves_synapse_and_sdk_metrics(client: Client, settings: Settings) -> None:
    address = f"127.0.0.1:{free_port()}"
    temporal = TemporalSettings(task_queue=settings.temporal.task_queue, worker_metrics_address=address)
    measured = settings.model_copy(update={"temporal": temporal})
    runtime = metrics_runtime(measured)
    assert runtime is not None
    metered = await Client.connect(
        client.service_client.config.target_host,
        namespace=client.namespace,
        data_converter=client.data_converter,
        runtime=runtime,
    )
    key = f"metrics-{uuid.uuid4().hex[:8]}"
    async with build_worker(metered, measured):
        message = InboundMessage(content=DELETE_CANCELLED, sender_id="alice", chat_id="t")
        await session_calls.send_message(
            metered, temporal.task_queue, SessionConfig(session_key=key), message
        )
        handle = metered.get_workflow_handle(session_workflow_id(key))

        async def pending() -> int:
            return len((await handle.query(SessionWorkflow.get_status)).pending_interactions)

        await assert_eventually(pending, lambda n: n == 1, what="the approval pending")
        await handle.execute_update(
            SessionWorkflow.respond_checked,
            InteractionResponse(interaction_id="tool_1", approved=True, principal="bob", channel="http"),
        )

        async def scraped() -> list[Sample]:
            async with httpx.AsyncClient() as http:
                text = (await http.get(f"http://{address}/metrics")).text
            return [sample for family in text_string_to_metric_families(text) for sample in family.samples]

        found = await assert_eventually(
            scraped, lambda m: value(m, "synapse_tool_runs_total") == 1, what="the tool run counted"
        )
    assert value(found, "synapse_interactions_opened_total", type="tool_approval", channel="http") == 1
    decided = {"type": "tool_approval", "outcome": "approved", "channel": "http"}
    assert value(found, "synapse_interactions_decided_total", **decided) == 1
    assert value(found, "synapse_approval_wait_seconds_count", outcome="approved") == 1
    assert value(found, "synapse_tool_runs_total", tool="sql", ok="true") == 1
    assert any(sample.name.startswith("temporal_") for sample in found), "the SDK's own metrics too"


def value(samples: list[Sample], name: str, **labels: str) -> float:
    """The sum of the samples named `name` whose labels include `labels`."""
    return sum(s.value for s in samples if s.name == name and labels.items() <= s.labels.items())
