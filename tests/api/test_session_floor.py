"""A session only tightens, over HTTP with API keys on: an operator may not widen the sandbox, lower
its agent's two-person rule or start a session for someone else; an admin may do each."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from temporalio.client import Client

from core.settings import Settings
from tests.conftest import assert_eventually

from ..support import serve_agents
from .test_sessions import DELETE_CANCELLED, new_key

KEYS = "k-op:otto:operator,k-oscar:oscar:approver,k-pat:pat:approver,k-quinn:quinn:approver,k-ada:ada:admin"
CAREFUL = """
[agents.careful]
framework = "demo"
model = "demo"
tools = ["sql"]

[agents.careful.policies.sql]
approvers = ["oscar", "pat", "quinn"]
approvals_required = 2
"""
"""An agent whose SQL writes need two of oscar, pat and quinn."""
LOWERED = (
    "policies.sql.approvals_required 1 is below the agent's 2: a session may only raise it "
    "(an admin may lower it)"
)


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


@pytest.fixture
async def keyed(client: Client, settings: Settings, tmp_path: Path) -> AsyncIterator[httpx.AsyncClient]:
    """The API (keys on) and a worker, with `Agent:careful` declared."""
    with_keys = settings.model_copy(update={"api": settings.api.model_copy(update={"keys": KEYS})})
    async with serve_agents(client, with_keys, CAREFUL, tmp_path) as http:
        yield http


async def start(http: httpx.AsyncClient, key: str, as_key: str, **body: Any) -> httpx.Response:
    """`POST /sessions` for session `key` with `body`, as the holder of `as_key`."""
    return await http.post("/sessions", json={"session_key": key, **body}, headers=bearer(as_key))


async def pending_delete(http: httpx.AsyncClient, key: str) -> dict[str, Any]:
    """Send the DELETE to session `key` as otto; the approval request it opens."""
    sent = await http.post(
        f"/sessions/{key}/messages", json={"content": DELETE_CANCELLED}, headers=bearer("k-op")
    )
    assert sent.status_code == 202, sent.text
    live = await assert_eventually(
        lambda: http.get(f"/sessions/{key}", headers=bearer("k-op")),
        lambda got: bool(got.json()["pending_interactions"]),
        what=f"{key} asking for approval",
    )
    return dict(live.json()["pending_interactions"][0])


async def approve(http: httpx.AsyncClient, key: str, interaction_id: str, as_key: str) -> httpx.Response:
    return await http.post(
        f"/sessions/{key}/interactions/{interaction_id}", json={"approved": True}, headers=bearer(as_key)
    )


async def test_an_operator_may_only_narrow_the_sandbox_and_an_admin_may_widen_it(
    keyed: httpx.AsyncClient,
) -> None:
    wide = await start(keyed, new_key(), "k-op", sandbox="full")
    assert wide.status_code == 403, wide.text
    assert wide.json()["detail"] == (
        "sandbox full is wider than the deployment's (SYNAPSE_TERMINAL_SANDBOX) workspace-write: a session "
        "may only narrow it (an admin may widen it)"
    )
    narrow = await start(keyed, new_key(), "k-op", sandbox="read-only")
    assert narrow.status_code == 201 and narrow.json()["sandbox"] == "read-only", narrow.text
    by_admin = await start(keyed, new_key(), "k-ada", sandbox="full")
    assert by_admin.status_code == 201 and by_admin.json()["sandbox"] == "full", by_admin.text


async def test_a_session_may_not_lower_its_agents_two_person_rule_but_may_tighten_it(
    keyed: httpx.AsyncClient, count_orders: Callable[[str], int]
) -> None:
    attack = {"sql": {"approvers": ["oscar"], "approvals_required": 1}}
    lowered = await start(keyed, new_key(), "k-op", agent_id="Agent:careful", policies=attack)
    assert lowered.status_code == 403 and lowered.json()["detail"] == LOWERED, lowered.text

    key = new_key()
    tighter = {"sql": {"approvers": ["oscar", "pat"], "approvals_required": 2, "allow_grants": False}}
    started = await start(keyed, key, "k-op", agent_id="Agent:careful", policies=tighter)
    assert started.status_code == 201, started.text
    request = await pending_delete(keyed, key)
    assert (request["approvers"], request["approvals_required"]) == (["oscar", "pat"], 2)
    interaction_id = request["interaction_id"]
    assert (await approve(keyed, key, interaction_id, "k-quinn")).status_code == 403, (
        "the session narrowed it"
    )
    first = await approve(keyed, key, interaction_id, "k-oscar")
    assert first.status_code == 202 and first.json()["complete"] is False, first.text
    assert count_orders("status = 'cancelled'") == 3, "one approval runs nothing"
    second = await approve(keyed, key, interaction_id, "k-pat")
    assert second.status_code == 200 and second.json()["approvals"] == ["oscar", "pat"], second.text
    assert count_orders("status = 'cancelled'") == 0


async def test_a_session_that_names_only_its_approvers_keeps_the_agents_two_person_rule(
    keyed: httpx.AsyncClient,
) -> None:
    key = new_key()
    started = await start(
        keyed, key, "k-op", agent_id="Agent:careful", policies={"sql": {"approvers": ["oscar", "pat"]}}
    )
    assert started.status_code == 201, started.text
    request = await pending_delete(keyed, key)
    assert (request["approvers"], request["approvals_required"]) == (["oscar", "pat"], 2)


async def test_an_admin_may_lower_the_agents_two_person_rule(keyed: httpx.AsyncClient) -> None:
    key = new_key()
    lowered = {"sql": {"approvers": ["oscar"], "approvals_required": 1}}
    started = await start(keyed, key, "k-ada", agent_id="Agent:careful", policies=lowered)
    assert started.status_code == 201, started.text
    request = await pending_delete(keyed, key)
    assert (request["approvers"], request["approvals_required"]) == (["oscar"], 1)
    decided = await approve(keyed, key, request["interaction_id"], "k-oscar")
    assert decided.status_code == 200 and decided.json()["complete"] is True, decided.text


async def test_a_session_is_for_its_caller_unless_an_admin_names_another(keyed: httpx.AsyncClient) -> None:
    other = await start(keyed, new_key(), "k-op", user="alice")
    assert other.status_code == 403, other.text
    assert other.json()["detail"] == (
        "user 'alice' is not the caller 'otto': with API keys on a session is for its caller (an admin may "
        "name another person)"
    )
    own = await start(keyed, new_key(), "k-op")
    assert own.status_code == 201 and own.json()["user"] == "otto", own.text
    named = await start(keyed, new_key(), "k-ada", user="alice")
    assert named.status_code == 201 and named.json()["user"] == "alice", named.text


async def test_the_openapi_document_says_what_a_403_of_post_sessions_means(keyed: httpx.AsyncClient) -> None:
    document = (await keyed.get("/openapi.json")).json()
    refused = document["paths"]["/sessions"]["post"]["responses"]["403"]
    assert "may only raise `approvals_required`" in refused["description"]
    assert "An admin may loosen each" in refused["description"]
