"""Who may decide: per-tool policies of a session, the two-person rule, tools marked critical."""

from __future__ import annotations

from collections.abc import Callable

import httpx

from contracts import TaskChunkType

from ..support import asked, collect_events
from .test_sessions import DELETE_CANCELLED, decide, is_type, new_key


async def start(http: httpx.AsyncClient, key: str, policies: dict[str, object]) -> str:
    """A session with `policies`; the interaction id of its DELETE's approval request."""
    created = await http.post(
        "/sessions", json={"session_key": key, "approvers": ["bob", "carol"], "policies": policies}
    )
    assert created.status_code == 201, created.text
    sent = await http.post(
        f"/sessions/{key}/messages", json={"content": DELETE_CANCELLED, "principal": "alice"}
    )
    assert sent.status_code == 202, sent.text
    chunks = await collect_events(http, key, is_type(TaskChunkType.TOOL_APPROVAL_REQUEST))
    return asked(chunks[-1]).interaction_id


async def test_a_tool_policy_names_who_decides_its_calls(
    http: httpx.AsyncClient, count_orders: Callable[[str], int]
) -> None:
    key = new_key()
    interaction_id = await start(http, key, {"sql": {"approvers": ["dave"]}, "*": {"approvers": ["erin"]}})
    pending = (await http.get(f"/sessions/{key}")).json()["pending_interactions"][0]
    assert pending["approvers"] == ["dave"], "the tool's own policy wins over `*` and the session's approvers"
    refused = await decide(http, key, interaction_id, approved=True, principal="bob")
    assert refused.status_code == 403 and "allowed approvers: dave" in refused.json()["detail"]
    assert (await decide(http, key, interaction_id, approved=True, principal="dave")).status_code == 200
    assert count_orders("status = 'cancelled'") == 0


async def test_the_two_person_rule_needs_two_different_approvers(
    http: httpx.AsyncClient, count_orders: Callable[[str], int]
) -> None:
    key = new_key()
    interaction_id = await start(http, key, {"sql": {"approvals_required": 2}})
    first = await decide(http, key, interaction_id, approved=True, principal="bob")
    assert first.status_code == 202, first.text
    assert (first.json()["complete"], first.json()["approvals"]) == (False, ["bob"])
    assert count_orders("status = 'cancelled'") == 3, "one approval runs nothing"
    pending = (await http.get(f"/sessions/{key}")).json()["pending_interactions"][0]
    assert (pending["approved_by"], pending["approvals_required"]) == (["bob"], 2)
    twice = await decide(http, key, interaction_id, approved=True, principal="bob")
    assert twice.status_code == 409 and "must come from someone else" in twice.json()["detail"]
    second = await decide(http, key, interaction_id, approved=True, principal="carol")
    assert second.status_code == 200, second.text
    assert second.json()["approvals"] == ["bob", "carol"] and second.json()["tool_result"]["ok"]
    assert count_orders("status = 'cancelled'") == 0
    audit = (await http.get(f"/sessions/{key}/audit")).json()["entries"]
    assert [(e["kind"], e["principal"]) for e in audit] == [
        ("requested", "alice"),
        ("approval_counted", "bob"),
        ("rejected", "bob"),  # the same person twice: refused with 409, and recorded
        ("approved", "carol"),
    ]


async def test_under_the_two_person_rule_one_denial_denies(
    http: httpx.AsyncClient, count_orders: Callable[[str], int]
) -> None:
    key = new_key()
    interaction_id = await start(http, key, {"*": {"approvals_required": 2}})
    assert (await decide(http, key, interaction_id, approved=True, principal="bob")).status_code == 202
    denied = await decide(http, key, interaction_id, approved=False, principal="carol")
    assert denied.status_code == 200 and denied.json()["approved"] is False
    assert count_orders("status = 'cancelled'") == 3


async def test_a_policy_can_forbid_grants(http: httpx.AsyncClient) -> None:
    key = new_key()
    interaction_id = await start(http, key, {"sql": {"allow_grants": False}})
    refused = await decide(
        http, key, interaction_id, approved=True, principal="bob", response_data={"grant": "session"}
    )
    assert refused.status_code == 422 and "allows no grants" in refused.json()["detail"]
