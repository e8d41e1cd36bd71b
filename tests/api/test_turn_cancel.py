"""Cancelling a turn (not the session): while an approval or a question waits; the agent is told."""

from __future__ import annotations

from collections.abc import Callable

import httpx

from contracts import TaskChunkType, TurnCancelled

from ..support import collect_events, event_of
from .test_sessions import DELETE_CANCELLED, ask_for_delete, is_type, new_key


async def test_cancelling_a_turn_withdraws_its_approval_and_the_session_goes_on(
    http: httpx.AsyncClient, count_orders: Callable[[str], int]
) -> None:
    key = new_key()
    request = await ask_for_delete(http, key)
    cancelled = await http.post(
        f"/sessions/{key}/turn/cancel", json={"reason": "wrong table", "principal": "alice"}
    )
    assert cancelled.status_code == 200, cancelled.text
    assert cancelled.json()["status"] == "active" and cancelled.json()["pending_interactions"] == []
    chunks = await collect_events(
        http, key, is_type(TaskChunkType.CANCELLED), params={"after": request.sequence_id}
    )
    assert chunks[-1].is_final and event_of(chunks[-1], TurnCancelled).by == "alice"
    assert count_orders("status = 'cancelled'") == 3, "nothing ran"
    audit = (await http.get(f"/sessions/{key}/audit")).json()["entries"]
    assert [(e["kind"], e["principal"]) for e in audit] == [
        ("requested", "alice"),
        ("turn_cancelled", "alice"),
        ("denied", "system:cancel"),
    ]
    messages = (await http.get(f"/sessions/{key}/messages")).json()["messages"]
    assert messages[-2]["role"] == "tool" and messages[-2]["content"]["cancelled"] is True
    assert messages[-1] == {
        **messages[-1],
        "role": "system",
        "content": "[alice cancelled this request: wrong table]",
    }

    again = await http.post(f"/sessions/{key}/turn/cancel", json={})
    assert again.status_code == 409 and "no turn is running" in again.json()["detail"]
    answered = await http.post(
        f"/sessions/{key}/messages?wait=true", json={"content": "SELECT COUNT(*) FROM orders"}
    )
    assert answered.status_code == 200 and answered.json()["status"] == "completed", "the session goes on"


async def test_cancelling_a_turn_that_waits_for_an_answer(http: httpx.AsyncClient) -> None:
    key = new_key()
    asked = await http.post(f"/sessions/{key}/messages?wait=true", json={"content": "ask: Which table?"})
    assert asked.status_code == 202 and asked.json()["status"] == "waiting"
    cancelled = await http.post(f"/sessions/{key}/turn/cancel", json={})
    assert cancelled.status_code == 200, cancelled.text
    audit = (await http.get(f"/sessions/{key}/audit")).json()["entries"]
    assert [e["kind"] for e in audit][-2:] == ["turn_cancelled", "declined"]
    still = await http.post(f"/sessions/{key}/messages?wait=true", json={"content": DELETE_CANCELLED})
    assert still.status_code == 202 and still.json()["pending"]["interaction_type"] == "tool_approval"
