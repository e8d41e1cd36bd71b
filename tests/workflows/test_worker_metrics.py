"""The worker's Prometheus endpoint: the SDK's `temporal_*` metrics and Synapse's own, from the workflow
(requests opened and decided, approval wait) and the tool activity (runs by tool and result)."""

from __future__ import annotations

import uuid
from collections import Counter
from dataclasses import dataclass

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.samples import Sample
from temporalio.client import Client

from api.calls import sessions as session_calls
from contracts import InboundMessage, SessionConfig
from core.connect import metrics_runtime
from core.settings import Settings, TemporalSettings
from tests.conftest import assert_eventually
from tests.support import free_port
from tests.workflows.graph.flows import edge, finished, start_graph, statuses, task
from worker import build_worker
from workflows.identity.ids import session_workflow_id
from workflows.session import SessionWorkflow

from ..decisions import decided

DELETE_CANCELLED = "DELETE FROM orders WHERE status = 'cancelled'"


@dataclass
class Metered:
    """A client whose runtime serves Prometheus metrics at `address`, and its worker's settings."""

    client: Client
    settings: Settings
    address: str

    async def scraped(self) -> list[Sample]:
        async with httpx.AsyncClient() as http:
            text = (await http.get(f"http://{self.address}/metrics")).text
        return [sample for family in text_string_to_metric_families(text) for sample in family.samples]


@pytest.fixture
async def metered(client: Client, settings: Settings) -> Metered:
    address = f"127.0.0.1:{free_port()}"
    temporal = TemporalSettings(task_queue=settings.temporal.task_queue, worker_metrics_address=address)
    measured = settings.model_copy(update={"temporal": temporal})
    runtime = metrics_runtime(measured)
    assert runtime is not None
    connected = await Client.connect(
        client.service_client.config.target_host,
        namespace=client.namespace,
        data_converter=client.data_converter,
        runtime=runtime,
    )
    return Metered(connected, measured, address)


async def test_the_worker_serves_synapse_and_sdk_metrics(metered: Metered) -> None:
    temporal, measured, scraped = metered.settings.temporal, metered.settings, metered.scraped
    metered_client = metered.client
    key = f"metrics-{uuid.uuid4().hex[:8]}"
    async with build_worker(metered_client, measured):
        message = InboundMessage(content=DELETE_CANCELLED, sender_id="alice", chat_id="t")
        await session_calls.send_message(
            metered_client, temporal.task_queue, SessionConfig(session_key=key), message
        )
        handle = metered_client.get_workflow_handle(session_workflow_id(key))

        async def pending() -> int:
            return len((await handle.query(SessionWorkflow.get_status)).pending_interactions)

        await assert_eventually(pending, lambda n: n == 1, what="the approval pending")
        await handle.execute_update(
            SessionWorkflow.decide_checked,
            decided(interaction_id="tool_1", approved=True, principal="bob", channel="http"),
        )

        found = await assert_eventually(
            scraped, lambda m: value(m, "synapse_tool_runs_total") == 1, what="the tool run counted"
        )
    assert value(found, "synapse_interactions_opened_total", type="tool_approval", channel="http") == 1
    labels = {"type": "tool_approval", "outcome": "approved", "channel": "http"}
    assert value(found, "synapse_interactions_decided_total", **labels) == 1
    assert value(found, "synapse_approval_wait_seconds_count", outcome="approved") == 1
    assert value(found, "synapse_tool_runs_total", tool="sql", ok="true") == 1
    assert any(sample.name.startswith("temporal_") for sample in found), "the SDK's own metrics too"


async def test_graph_tasks_are_counted_once_by_the_status_they_end_in(metered: Metered) -> None:
    blueprint = {
        "new_tasks": [task("a"), task("b", input_data={"fail": "card declined"}), task("c")],
        "new_edges": [edge("a", "b"), edge("b", "c")],
    }
    async with build_worker(metered.client, metered.settings):
        handle = await start_graph(metered.client, metered.settings.temporal.task_queue, blueprint)
        ended = Counter(statuses(await finished(handle)).values())
        assert ended == {"completed": 1, "failed": 1, "skipped": 1}
        found = await assert_eventually(
            metered.scraped,
            lambda m: value(m, "synapse_graph_tasks_total", status="skipped") == 1,
            what="the skipped task counted",
        )
    for status, count in ended.items():
        assert value(found, "synapse_graph_tasks_total", status=status) == count, status


def value(samples: list[Sample], name: str, **labels: str) -> float:
    """The sum of the samples named `name` whose labels include `labels`."""
    return sum(s.value for s in samples if s.name == name and labels.items() <= s.labels.items())
