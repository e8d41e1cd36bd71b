"""Chat replies that decide approvals, and pause / resume / cancel."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import pytest
from temporalio.client import Client

from contracts import DecisionTaken, ReplyRefused, TaskChunkType, TurnAnswered
from workflows.session import SessionWorkflow

from ..conftest import assert_eventually
from ..decisions import decided
from ..support import asked, asked_content, collect_events, event_of, events
from .test_sessions import DEMO_AGENTS, ask_for_delete, is_type, new_key


@pytest.mark.parametrize("agent_id", DEMO_AGENTS)
@pytest.mark.parametrize(
    ("reply", "approved", "cancelled_left"),
    [("确认", True, 0), ("yes", True, 0), ("取消", False, 3), ("no", False, 3), ("let me think", False, 3)],
)
async def test_a_chat_reply_decides_the_pending_approval(
    http: httpx.AsyncClient,
    count_orders: Callable[[str], int],
    reply: str,
    approved: bool,
    cancelled_left: int,
    agent_id: str,
) -> None:
    key = new_key()
    request = await ask_for_delete(http, key, principal="alice", agent_id=agent_id)
    answer = await http.post(f"/sessions/{key}/messages", json={"content": reply, "principal": "alice"})
    assert answer.status_code == 202
    chunks = await collect_events(
        http, key, is_type(TaskChunkType.COMPLETE), params={"after": request.sequence_id}
    )
    decision = events(chunks, DecisionTaken)[0]
    assert decision.approved is approved
    assert decision.decided_by == "alice"
    assert count_orders("status = 'cancelled'") == cancelled_left
    session = (await http.get(f"/sessions/{key}")).json()
    user_texts = [m["content"] for m in session["messages"] if m["role"] == "user"]
    assert user_texts == [asked_content(request)["tool_params"]["sql"]], "the reply must not reach the agent"
    audit = (await http.get(f"/sessions/{key}/audit")).json()["entries"]
    assert audit[-1]["kind"] == ("approved" if approved else "denied")
    if reply == "let me think":
        assert "ambiguous" in audit[-1]["comment"] and "确认" in audit[-1]["comment"], (
            "it says which words count"
        )


async def test_a_reply_from_someone_not_allowed_decides_nothing(
    http: httpx.AsyncClient, count_orders: Callable[[str], int]
) -> None:
    key = new_key()
    assert (
        await http.post("/sessions", json={"session_key": key, "approvers": ["alice"]})
    ).status_code == 201
    request = await ask_for_delete(http, key, principal="alice")
    await http.post(f"/sessions/{key}/messages", json={"content": "确认", "principal": "mallory"})
    chunks = await collect_events(
        http, key, is_type(TaskChunkType.ERROR), params={"after": request.sequence_id}
    )
    assert "'mallory' may not decide interaction" in event_of(chunks[-1], ReplyRefused).reason
    session = (await http.get(f"/sessions/{key}")).json()
    assert session["status"] == "waiting_approval"
    assert count_orders("status = 'cancelled'") == 3
    audit = (await http.get(f"/sessions/{key}/audit")).json()["entries"]
    assert (audit[-1]["kind"], audit[-1]["principal"]) == ("rejected", "mallory")


async def test_cancel_while_waiting_denies_and_closes(
    http: httpx.AsyncClient, count_orders: Callable[[str], int]
) -> None:
    key = new_key()
    request = await ask_for_delete(http, key)
    cancelled = await http.post(f"/sessions/{key}/cancel", json={"reason": "wrong table", "principal": "ops"})
    assert cancelled.status_code == 200, cancelled.text
    assert cancelled.json()["status"] == "cancelled"
    assert cancelled.json()["pending_interactions"] == []
    chunks = await collect_events(
        http, key, is_type(TaskChunkType.CANCELLED), params={"after": request.sequence_id}
    )
    assert chunks[-1].is_final
    audit = (await http.get(f"/sessions/{key}/audit")).json()["entries"]
    kinds = [(e["kind"], e["principal"]) for e in audit]
    assert ("cancelled", "ops") in kinds and ("denied", "system:cancel") in kinds
    assert count_orders("status = 'cancelled'") == 3
    for action in ("pause", "resume", "cancel"):
        late = await http.post(f"/sessions/{key}/{action}")
        assert late.status_code == 409, (action, late.text)
    decided = await http.post(
        f"/sessions/{key}/interactions/{asked(request).interaction_id}", json={"approved": True}
    )
    assert decided.status_code == 409


async def test_pause_holds_new_work_until_resume(http: httpx.AsyncClient) -> None:
    key = new_key()
    assert (await http.post("/sessions", json={"session_key": key})).status_code == 201
    paused = await http.post(f"/sessions/{key}/pause", json={"reason": "lunch"})
    assert paused.status_code == 200 and paused.json()["status"] == "paused"
    assert (await http.post(f"/sessions/{key}/pause")).status_code == 409
    await http.post(f"/sessions/{key}/messages", json={"content": "SELECT COUNT(*) AS n FROM orders"})
    chunks = await collect_events(http, key, is_type(TaskChunkType.PROCESSING))
    status = (await http.get(f"/sessions/{key}")).json()
    assert status["status"] == "paused"
    assert [m["role"] for m in status["messages"]] == ["user"], "no agent step while paused"
    resumed = await http.post(f"/sessions/{key}/resume")
    assert resumed.status_code == 200 and resumed.json()["status"] == "active"
    assert (await http.post(f"/sessions/{key}/resume")).status_code == 409
    after = await collect_events(
        http, key, is_type(TaskChunkType.COMPLETE), params={"after": chunks[-1].sequence_id}
    )
    [answer] = [c for c in after if c.chunk_type == TaskChunkType.RESPONSE]
    assert event_of(answer, TurnAnswered).answer == "SELECT returned 1 row:\nn\n8", (
        "the turn held by the pause ran once, after it"
    )


async def test_events_resume_after_the_last_event_id(http: httpx.AsyncClient) -> None:
    key = new_key()
    await http.post(f"/sessions/{key}/messages", json={"content": "hello"})
    everything = await collect_events(http, key, is_type(TaskChunkType.COMPLETE))
    assert [c.sequence_id for c in everything] == list(range(len(everything)))
    middle = everything[1].sequence_id
    by_header = await collect_events(
        http, key, is_type(TaskChunkType.COMPLETE), headers={"Last-Event-ID": str(middle)}
    )
    by_query = await collect_events(http, key, is_type(TaskChunkType.COMPLETE), params={"after": middle})
    assert by_header == by_query == everything[2:]


async def test_a_chat_reply_sent_with_wait_answers_when_its_decision_ends_the_turn(
    http: httpx.AsyncClient, count_orders: Callable[[str], int]
) -> None:
    key = new_key()
    assert (
        await http.post("/sessions", json={"session_key": key, "approvers": ["alice"]})
    ).status_code == 201
    await ask_for_delete(http, key, principal="alice")
    refused = await http.post(
        f"/sessions/{key}/messages", params={"wait": "true"}, json={"content": "确认", "principal": "mallory"}
    )
    assert refused.json()["status"] == "failed", refused.text
    assert refused.json()["answer"]["reason"].startswith("'mallory' may not decide interaction"), (
        "at once, not after a minute"
    )
    answered = await http.post(
        f"/sessions/{key}/messages", params={"wait": "true"}, json={"content": "确认", "principal": "alice"}
    )
    assert answered.status_code == 200, answered.text
    assert answered.json()["status"] == "completed"
    assert answered.json()["answer"] == "DELETE done: 3 rows affected."
    assert count_orders("status = 'cancelled'") == 0


async def test_a_waiting_request_is_answered_whole_in_sync_mode(http: httpx.AsyncClient) -> None:
    key = new_key()
    policy = {"sql": {"approvals_required": 2, "escalate_to": ["dave"], "escalate_after_seconds": 600}}
    created = await http.post(
        "/sessions", json={"session_key": key, "approvers": ["bob"], "policies": policy}
    )
    assert created.status_code == 201, created.text
    sent = await http.post(
        f"/sessions/{key}/messages",
        params={"wait": "true"},
        json={"content": "DELETE FROM orders WHERE status = 'cancelled'", "principal": "alice"},
    )
    assert sent.json()["status"] == "waiting", sent.text
    pending = sent.json()["pending"]
    shown = (await http.get(f"/sessions/{key}")).json()["pending_interactions"][0]
    for field in ("requested_by", "approvals_required", "escalate_to", "escalate_at", "approvers"):
        assert pending[field] == shown[field], field
    assert (pending["requested_by"], pending["approvals_required"], pending["escalate_to"]) == (
        "alice",
        2,
        ["dave"],
    )


async def test_a_decision_a_door_was_refused_is_only_recorded_never_taken(
    http: httpx.AsyncClient, client: Client, count_orders: Callable[[str], int]
) -> None:
    """The API sends a refused decision again (marked `refused`) so that the workflow records it; should
    it pass the check by then (the request escalated to its sender), it is still not taken."""
    key = new_key()
    request = await ask_for_delete(http, key)
    interaction_id = asked(request).interaction_id
    refused = decided(interaction_id=interaction_id, principal="bob").model_copy(
        update={"refused": "bob was not among the approvers when he decided"}
    )
    await client.get_workflow_handle(f"session:{key}").signal(SessionWorkflow.decide, refused)
    entries = await assert_eventually(
        lambda: _entries(http, key), lambda e: e[-1]["kind"] == "rejected", what="the refusal recorded"
    )
    assert (entries[-1]["principal"], entries[-1]["comment"]) == ("bob", refused.refused)
    assert (await http.get(f"/sessions/{key}")).json()["pending_interactions"][0][
        "interaction_id"
    ] == interaction_id
    assert count_orders("status = 'cancelled'") == 3, "nothing ran"


async def _entries(http: httpx.AsyncClient, key: str) -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = (await http.get(f"/sessions/{key}/audit")).json()["entries"]
    return entries
