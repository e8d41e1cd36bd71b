"""`SynapseClient` against the real app, worker and dev server: a whole supervised turn, errors,
and an event stream that the server cuts short being resumed without loss."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Callable

import httpx
import pytest
from temporalio.client import Client

from api.main import create_app
from api.sse import StreamHub
from contracts import TaskChunkType, TaskStreamChunk, TurnStarted
from core.client import SynapseClient, SynapseError
from core.settings import Settings

from ..conftest import assert_eventually
from ..support import asked, running

DELETE_CANCELLED = "DELETE FROM orders WHERE status = 'cancelled'"


@pytest.fixture
async def synapse(client: Client, settings: Settings, worker: None) -> AsyncIterator[SynapseClient]:
    async with running(create_app(settings, client=client)) as base_url, SynapseClient(base_url) as api:
        yield api


async def until(events: AsyncIterator[TaskStreamChunk], kind: TaskChunkType) -> list[TaskStreamChunk]:
    seen: list[TaskStreamChunk] = []
    async with asyncio.timeout(30):
        async for chunk in events:
            seen.append(chunk)
            if chunk.chunk_type == kind:
                return seen
    raise AssertionError(f"the stream ended before {kind}: {[c.chunk_type for c in seen]}")


async def test_a_supervised_turn_through_the_client(
    synapse: SynapseClient, count_orders: Callable[[str], int]
) -> None:
    key = f"c-{uuid.uuid4().hex[:8]}"
    accepted = await synapse.send(key, DELETE_CANCELLED, principal="alice")
    assert accepted.workflow_id == f"session:{key}"
    events = synapse.events(key)
    request = (await until(events, TaskChunkType.TOOL_APPROVAL_REQUEST))[-1]
    interaction_id = asked(request).interaction_id

    paused = await synapse.pause(key, reason="look first")
    resumed = await synapse.resume(key)
    outcome = await synapse.decide(key, interaction_id, approved=True, principal="bob")

    assert (paused.status, resumed.status) == ("paused", "waiting_approval")
    assert (
        outcome is not None
        and outcome.tool_result is not None
        and outcome.tool_result.content["rowcount"] == 3
    )
    assert count_orders("status = 'cancelled'") == 0
    answered = await until(events, TaskChunkType.COMPLETE)
    assert [c.sequence_id for c in answered] == list(
        range(request.sequence_id + 1, answered[-1].sequence_id + 1)
    )
    kinds = [e.kind for e in (await synapse.audit(key)).entries]
    assert kinds == ["requested", "paused", "resumed", "approved"]
    assert (await synapse.cancel(key)).status == "cancelled"


async def test_errors_carry_the_status_and_the_apis_words(synapse: SynapseClient) -> None:
    with pytest.raises(SynapseError) as missing:
        await synapse.session("nobody-here")
    with pytest.raises(SynapseError) as stream:
        await anext(synapse.events("nobody-here"))
    with pytest.raises(SynapseError) as refused:
        await synapse.create_session(f"c-{uuid.uuid4().hex[:8]}", agent_id="Agent:ghost")

    assert (missing.value.status, missing.value.detail) == (404, "no session 'nobody-here'")
    assert stream.value.status == 404
    assert refused.value.status == 422 and "Agent:ghost" in refused.value.detail


async def test_a_stream_the_server_cuts_short_is_resumed_without_loss(
    client: Client, settings: Settings, worker: None
) -> None:
    lagging = settings.model_copy(update={"api": settings.api.model_copy(update={"sse_client_buffer": 4})})
    app = create_app(lagging, client=client)
    async with running(app, send_buffer=8192) as base_url, SynapseClient(base_url) as synapse:
        requests: list[httpx.Request] = []

        async def record(request: httpx.Request) -> None:
            requests.append(request)

        synapse.http.event_hooks["request"].append(record)
        key = f"c-{uuid.uuid4().hex[:8]}"
        await synapse.send(key, "hello")
        events = synapse.events(key)
        chunks = await until(events, TaskChunkType.COMPLETE)
        # The caller stops reading while a lot is published: the server drops it (`reconnect`).
        for n in range(16):
            await synapse.send(key, f"{n} {'x' * 20_000}")
        sent = 16

        async def attached() -> int:
            hub: StreamHub = app.state.hub
            return hub.clients(f"session:{key}")

        while True:  # the turns may reach the feed in one burst, which never drops a client
            try:
                await assert_eventually(
                    attached, lambda n: n == 0, within=5, what="the lagging client dropped by the server"
                )
                break
            except AssertionError:
                if sent >= 20:
                    raise
            await synapse.send(key, f"{sent} {'x' * 20_000}")  # a later burst does
            sent += 1
        async with asyncio.timeout(60):
            async for chunk in events:
                chunks.append(chunk)
                if sum(c.chunk_type == TaskChunkType.COMPLETE for c in chunks) == sent + 1:
                    break

    streams = [r for r in requests if r.url.path.endswith("/events")]
    assert len(streams) >= 2 and "last-event-id" in streams[-1].headers, "it resumed with Last-Event-ID"
    assert [c.sequence_id for c in chunks] == list(range(len(chunks))), "every chunk once, in order"
    said = [c.content.message[:2] for c in chunks if isinstance(c.content, TurnStarted)]
    assert said == ["he", *(f"{n} "[:2] for n in range(sent))]
