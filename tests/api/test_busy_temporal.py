"""When a session has no update slot free, a decision waits for one, and otherwise answers 503.

The slots are taken the way it happens in production: long-polls on the session's stream left
in flight by clients that went away (here, ten raw `workflow_streams` polls).
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
import pytest
from temporalio.client import Client, WorkflowHandle, WorkflowUpdateStage
from temporalio.contrib.workflow_streams import PollInput, PollResult
from temporalio.service import RPCError, RPCStatusCode

from api.calls.busy import retry_while_busy
from api.main import create_app
from contracts import SessionControl
from core.settings import Settings
from workflows.identity.ids import session_workflow_id
from workflows.session import STREAM_TOPIC, SessionWorkflow

from ..conftest import assert_eventually
from ..support import serve, updates_in_flight

DELETE_CANCELLED = "DELETE FROM orders WHERE status = 'cancelled'"
UPDATE_SLOTS = 10
"""Temporal's limit of updates in flight per workflow."""


async def occupy_update_slots(handle: WorkflowHandle[Any, Any]) -> None:
    """Fill every free update slot with a stream long-poll left waiting, as departed clients do."""
    offset = await handle.query("__temporal_workflow_stream_offset", result_type=int)
    for _ in range(UPDATE_SLOTS - await updates_in_flight(handle)):
        await handle.start_update(
            "__temporal_workflow_stream_poll",
            PollInput(topics=[STREAM_TOPIC], from_offset=offset),
            wait_for_stage=WorkflowUpdateStage.ACCEPTED,
            result_type=PollResult,
        )


async def release_update_slots(handle: WorkflowHandle[Any, Any]) -> None:
    """Publish a chunk (pause, then resume, by signal): every waiting poll returns."""
    await handle.signal(SessionWorkflow.pause, SessionControl(principal="ops"))
    await handle.signal(SessionWorkflow.resume, SessionControl(principal="ops"))


@pytest.fixture
async def impatient(client: Client, settings: Settings, worker: None) -> AsyncIterator[httpx.AsyncClient]:
    """The app with short waits: decisions 2 s, other commands 1 s."""
    api = settings.api.model_copy(update={"decision_wait_seconds": 2.0, "busy_retry_seconds": 1.0})
    quick = settings.model_copy(update={"api": api})
    async with serve(create_app(quick, client=client)) as http:
        yield http


async def waiting_for_approval(http: httpx.AsyncClient, key: str) -> str:
    assert (
        await http.post(f"/sessions/{key}/messages", json={"content": DELETE_CANCELLED})
    ).status_code == 202
    session = await assert_eventually(
        lambda: http.get(f"/sessions/{key}"),
        lambda r: r.status_code == 200 and bool(r.json()["pending_interactions"]),
        what="a pending approval",
    )
    interaction_id: str = session.json()["pending_interactions"][0]["interaction_id"]
    return interaction_id


async def jammed(http: httpx.AsyncClient, client: Client) -> tuple[str, str, WorkflowHandle[Any, Any]]:
    """A session waiting for approval with no update slot free: its key, interaction id, handle."""
    key = f"busy-{uuid.uuid4().hex[:8]}"
    interaction_id = await waiting_for_approval(http, key)
    handle = client.get_workflow_handle(session_workflow_id(key))
    await occupy_update_slots(handle)
    return key, interaction_id, handle


@pytest.mark.slow
async def test_without_room_commands_answer_503_and_change_nothing(
    impatient: httpx.AsyncClient, client: Client, count_orders: Callable[[str], int]
) -> None:
    key, interaction_id, handle = await jammed(impatient, client)

    decided, paused = await asyncio.gather(  # each takes one retry round of Temporal's client (~15 s)
        impatient.post(f"/sessions/{key}/interactions/{interaction_id}", json={"approved": True}),
        impatient.post(f"/sessions/{key}/pause"),
    )

    for response in (decided, paused):
        assert response.status_code == 503, response.text
        assert response.headers["Retry-After"] == "2"
        assert "no room" in response.json()["detail"] and "nothing was applied" in response.json()["detail"]
    session = (await impatient.get(f"/sessions/{key}")).json()
    assert session["status"] == "waiting_approval"
    assert [p["interaction_id"] for p in session["pending_interactions"]] == [interaction_id]
    assert count_orders("status = 'cancelled'") == 3
    await release_update_slots(handle)


async def test_a_decision_waits_for_a_free_slot_and_applies(
    http: httpx.AsyncClient, client: Client, count_orders: Callable[[str], int]
) -> None:
    key, interaction_id, handle = await jammed(http, client)

    decision = asyncio.ensure_future(
        http.post(
            f"/sessions/{key}/interactions/{interaction_id}", json={"approved": True, "principal": "bob"}
        )
    )
    done, _ = await asyncio.wait({decision}, timeout=1.0)
    assert not done, "no slot is free: the decision must still be waiting, not refused"
    await release_update_slots(handle)

    response = await decision
    assert response.status_code == 200, response.text
    assert response.json()["tool_result"]["content"]["rowcount"] == 3
    assert count_orders("status = 'cancelled'") == 0


def busy_error() -> RPCError:
    return RPCError(
        "limit on number of concurrent in-flight updates has been reached (10)",
        RPCStatusCode.RESOURCE_EXHAUSTED,
        b"",
    )


async def test_retrying_stops_at_success_at_other_errors_and_at_the_deadline() -> None:
    calls = 0

    async def busy_twice() -> str:
        nonlocal calls
        calls += 1
        if calls <= 2:
            raise busy_error()
        return "applied"

    assert await retry_while_busy(busy_twice, within=5) == "applied" and calls == 3

    async def too_large() -> None:
        raise RPCError(
            "grpc: received message larger than max (5000000 vs. 4194304)",
            RPCStatusCode.RESOURCE_EXHAUSTED,
            b"",
        )

    with pytest.raises(RPCError, match="larger than max"):
        await retry_while_busy(too_large, within=5)

    attempts = 0

    async def always_busy() -> None:
        nonlocal attempts
        attempts += 1
        raise busy_error()

    with pytest.raises(RPCError, match="in-flight updates"):
        await retry_while_busy(always_busy, within=0.3)
    assert 2 <= attempts <= 4, "backoff 0.05 s, 0.1 s, 0.2 s: the next wait would pass the deadline"
