"""A session Temporal terminated while it waited for an approval reads `terminated`, with the
reason, in `GET /sessions/{key}` and the listing, its request withdrawn (a decision on it is a 409
saying so), until a message takes it up again as a new conversation."""

from __future__ import annotations

from typing import Any

import httpx
from temporalio.client import Client

from workflows.identity.ids import session_workflow_id

from ..conftest import assert_eventually
from .test_sessions import DELETE_CANCELLED, decide, new_key

REASON = "runaway agent, stopped by the on-call"


async def listed(http: httpx.AsyncClient, key: str, **params: Any) -> dict[str, Any] | None:
    response = await http.get("/sessions", params={"limit": 500, **params})
    assert response.status_code == 200, response.text
    return next((s for s in response.json() if s["session_key"] == key), None)


async def session(http: httpx.AsyncClient, key: str) -> dict[str, Any]:
    response = await http.get(f"/sessions/{key}")
    assert response.status_code == 200, response.text
    found: dict[str, Any] = response.json()
    return found


async def test_a_terminated_session_reads_terminated_until_a_message_takes_it_up(
    http: httpx.AsyncClient, client: Client
) -> None:
    key = new_key()
    sent = await http.post(
        f"/sessions/{key}/messages", json={"content": DELETE_CANCELLED, "principal": "alice"}
    )
    assert sent.status_code == 202, sent.text
    waiting = await assert_eventually(
        lambda: session(http, key),
        lambda s: len(s["pending_interactions"]) == 1,
        within=60,
        what="an approval",
    )
    asked = waiting["pending_interactions"][0]["interaction_id"]
    await client.get_workflow_handle(session_workflow_id(key)).terminate(reason=REASON)

    ended = await session(http, key)
    assert ended["status"] == "terminated" and REASON in ended["reason"], ended
    assert ended["pending_interactions"] == [], "its request is withdrawn"
    summary = await listed(http, key)
    assert summary is not None and (summary["status"], summary["closed"], summary["pending"]) == (
        "terminated",
        True,
        0,
    )
    assert REASON in summary["reason"]
    assert await listed(http, key, status="terminated") is not None
    for params in ({"status": "waiting_approval"}, {"status": "active"}, {"waiting": "true"}):
        assert await listed(http, key, **params) is None, f"listed under {params}"

    refused = await decide(http, key, asked, approved=True, principal="alice")
    assert refused.status_code == 409, refused.text
    detail = refused.json()["detail"]
    assert "was terminated" in detail and REASON in detail and "withdrawn" in detail, detail

    again = await http.post(f"/sessions/{key}/messages", json={"content": "hello again"})
    assert again.status_code == 202, again.text
    accepted = again.json()
    assert accepted["restarted"] is True and "terminated" in accepted["note"] and REASON in accepted["note"]
    taken_up = await assert_eventually(
        lambda: session(http, key), lambda s: s["status"] == "active", what="the session going again"
    )
    assert taken_up["reason"] is None and taken_up["pending_interactions"] == []
    summary = await listed(http, key)
    assert summary is not None and (summary["status"], summary["closed"], summary["reason"]) == (
        "active",
        False,
        None,
    )
