"""`GET /sessions`: the sessions, newest first, from Temporal's visibility; filtered by status
and by whether a person is waited for."""

from __future__ import annotations

import httpx

from ..conftest import assert_eventually
from .test_sessions import new_key


async def listed(http: httpx.AsyncClient, **params: str | bool) -> dict[str, dict[str, object]]:
    answer = await http.get("/sessions", params={**params, "limit": 500})
    assert answer.status_code == 200, answer.text
    return {s["session_key"]: s for s in answer.json()}


async def test_sessions_are_listed_with_what_waits_and_filtered(http: httpx.AsyncClient) -> None:
    idle, asking = new_key(), new_key()
    assert (
        await http.post("/sessions", json={"session_key": idle, "agent_id": "Agent:demo-adk"})
    ).status_code == 201
    sent = await http.post(
        f"/sessions/{asking}/messages?wait=true", json={"content": "DELETE FROM orders WHERE id = 2"}
    )
    assert sent.json()["status"] == "waiting", sent.text
    everything = await assert_eventually(
        lambda: listed(http),
        lambda found: found.get(asking, {}).get("pending") == 1 and idle in found,
        what="both sessions listed, one waiting",
    )
    assert everything[idle] | {"started_at": None} == {
        "session_key": idle,
        "workflow_id": f"session:{idle}",
        "status": "active",
        "pending": 0,
        "channel": "http",
        "agent_id": "Agent:demo-adk",
        "started_at": None,
        "closed": False,
        "reason": None,
    }
    assert everything[asking]["status"] == "waiting_approval"
    waiting = await listed(http, waiting=True)
    assert asking in waiting and idle not in waiting
    active = await listed(http, status="active")
    assert idle in active and asking not in active
    bad = await http.get("/sessions", params={"status": "sleepy"})
    assert bad.status_code == 422 and "status" in bad.text


async def test_waiting_for_keeps_the_sessions_whose_requests_that_person_may_answer(
    http: httpx.AsyncClient,
) -> None:
    anyone, bobs = new_key(), new_key()
    created = await http.post("/sessions", json={"session_key": bobs, "approvers": ["bob"]})
    assert created.status_code == 201, created.text
    for key in (anyone, bobs):
        sent = await http.post(
            f"/sessions/{key}/messages?wait=true", json={"content": "DELETE FROM orders WHERE id = 3"}
        )
        assert sent.json()["status"] == "waiting", sent.text
    await assert_eventually(
        lambda: listed(http, waiting=True),
        lambda found: anyone in found and bobs in found,
        what="both sessions listed as waiting",
    )

    for_bob = await listed(http, waiting_for="bob")
    for_carol = await listed(http, waiting_for="carol")

    assert anyone in for_bob and bobs in for_bob
    assert anyone in for_carol and bobs not in for_carol, "carol may not answer a request only bob may"
    assert all(s["pending"] for s in for_carol.values()), "only sessions that wait are listed"


async def test_a_session_that_ended_last_is_listed_before_older_running_ones(http: httpx.AsyncClient) -> None:
    """Visibility lists every running workflow before any closed one: a page of the newest must not
    hide a session that ended behind the running sessions started before it."""
    older, old, ended = new_key(), new_key(), new_key()
    for key in (older, old, ended):
        assert (await http.post("/sessions", json={"session_key": key})).status_code == 201
    cancelled = await http.post(f"/sessions/{ended}/cancel", json={"reason": "done"})
    assert cancelled.status_code == 200, cancelled.text

    async def page() -> list[dict[str, object]]:
        answer = await http.get("/sessions", params={"limit": 2})
        assert answer.status_code == 200, answer.text
        found: list[dict[str, object]] = answer.json()
        return found

    newest = await assert_eventually(
        page, lambda found: bool(found) and found[0]["session_key"] == ended, what="the ended session first"
    )
    assert [s["session_key"] for s in newest] == [ended, old]
    assert newest[0]["status"] == "cancelled" and newest[0]["closed"] is True
