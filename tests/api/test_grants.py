"""Grants: "allow for this session" (the exact call, or its command head), listed, used, revoked."""

from __future__ import annotations

from collections.abc import Callable

import httpx

from contracts import DecisionTaken, TaskChunkType, TaskStreamChunk

from ..support import asked, asked_content, collect_events, events
from .test_sessions import decide, new_key


class Turns:
    """Sends statements to one session and follows its stream from where the last turn ended."""

    def __init__(self, http: httpx.AsyncClient, key: str) -> None:
        self.http, self.key, self.offset = http, key, -1

    async def send(self, sql: str) -> list[TaskStreamChunk]:
        """Send `sql`; the chunks until it asks for approval or completes."""
        sent = await self.http.post(
            f"/sessions/{self.key}/messages", json={"content": sql, "principal": "alice"}
        )
        assert sent.status_code == 202, sent.text
        return await self.follow()

    async def follow(self) -> list[TaskStreamChunk]:
        chunks = await collect_events(
            self.http,
            self.key,
            lambda c: c.chunk_type in (TaskChunkType.TOOL_APPROVAL_REQUEST, TaskChunkType.COMPLETE),
            params={"after": self.offset} if self.offset >= 0 else None,
        )
        self.offset = chunks[-1].sequence_id
        return chunks


async def grants(http: httpx.AsyncClient, key: str) -> list[dict]:  # type: ignore[type-arg]
    listed = await http.get(f"/sessions/{key}/grants")
    assert listed.status_code == 200, listed.text
    assert listed.json()["workflow_id"] == f"session:{key}"
    return listed.json()["grants"]  # type: ignore[no-any-return]


async def test_a_prefix_grant_allows_the_same_kind_on_the_same_table_until_revoked(
    http: httpx.AsyncClient, count_orders: Callable[[str], int]
) -> None:
    key = new_key()
    turns = Turns(http, key)
    request = (await turns.send("DELETE FROM orders WHERE id = 1"))[-1]
    assert request.chunk_type == TaskChunkType.TOOL_APPROVAL_REQUEST
    assert (
        asked_content(request)["grants"] == ["session", "session_prefix"]
        and asked_content(request)["head"] == "DELETE orders"
    )
    approved = await decide(
        http,
        key,
        asked(request).interaction_id,
        approved=True,
        principal="bob",
        response_data={"grant": "session_prefix"},
    )
    assert approved.status_code == 200, approved.text
    assert approved.json()["grant_id"] == "grant_1"
    await turns.follow()
    [grant] = await grants(http, key)
    assert (grant["grant_id"], grant["scope"], grant["head"], grant["granted_by"], grant["uses"]) == (
        "grant_1",
        "session_prefix",
        "DELETE orders",
        "bob",
        0,
    )

    chunks = await turns.send("DELETE FROM orders WHERE id = 2")
    assert chunks[-1].chunk_type == TaskChunkType.COMPLETE, "no approval asked"
    [allowed] = [d for d in events(chunks, DecisionTaken) if d.channel == "grant"]
    assert allowed.grant_id == "grant_1" and allowed.decided_by == "bob"
    assert count_orders("id IN (1, 2)") == 0
    assert (await grants(http, key))[0]["uses"] == 1
    audit = (await http.get(f"/sessions/{key}/audit")).json()["entries"]
    assert audit[-1]["kind"] == "allowed"
    assert audit[-1]["comment"].startswith(
        "allowed by grant grant_1 of bob: sql: DELETE FROM orders WHERE id = 2"
    )

    other_kind = (await turns.send("UPDATE orders SET status = 'x' WHERE id = 3"))[-1]
    assert other_kind.chunk_type == TaskChunkType.TOOL_APPROVAL_REQUEST, "an UPDATE is not a DELETE"
    assert (
        await decide(http, key, asked(other_kind).interaction_id, approved=False, principal="bob")
    ).status_code == 200
    await turns.follow()

    revoked = await http.delete(
        f"/sessions/{key}/grants/grant_1", params={"principal": "carol", "reason": "the cleanup is over"}
    )
    assert revoked.status_code == 200, revoked.text
    assert revoked.json()["revoked_by"] == "carol" and revoked.json()["revoked_at"]
    again = await http.delete(f"/sessions/{key}/grants/grant_1")
    assert again.status_code == 409 and "already revoked" in again.json()["detail"]
    unknown = await http.delete(f"/sessions/{key}/grants/grant_9")
    assert unknown.status_code == 404 and "no grant 'grant_9'" in unknown.json()["detail"]
    asked_again = (await turns.send("DELETE FROM orders WHERE id = 3"))[-1]
    assert asked_again.chunk_type == TaskChunkType.TOOL_APPROVAL_REQUEST, "a revoked grant asks again"
    assert count_orders("id = 3") == 1
    audit = (await http.get(f"/sessions/{key}/audit")).json()["entries"]
    assert [e["kind"] for e in audit if e["kind"] in ("granted", "allowed", "revoked")] == [
        "granted",
        "allowed",
        "revoked",
    ]
    [revocation] = [e for e in audit if e["kind"] == "revoked"]
    assert revocation["principal"] == "carol" and revocation["comment"].endswith("— the cleanup is over")


async def test_a_session_grant_allows_only_the_exact_call(
    http: httpx.AsyncClient, count_orders: Callable[[str], int]
) -> None:
    key = new_key()
    turns = Turns(http, key)
    insert = "INSERT INTO orders (customer, amount, status) VALUES ('zed', 1, 'new')"
    request = (await turns.send(insert))[-1]
    approved = await decide(
        http,
        key,
        asked(request).interaction_id,
        approved=True,
        principal="bob",
        response_data={"grant": "session"},
    )
    assert approved.status_code == 200, approved.text
    await turns.follow()
    assert (await turns.send(insert))[-1].chunk_type == TaskChunkType.COMPLETE
    assert count_orders("customer = 'zed'") == 2
    different = (await turns.send(insert.replace("zed", "amy")))[-1]
    assert different.chunk_type == TaskChunkType.TOOL_APPROVAL_REQUEST
    [grant] = await grants(http, key)
    assert grant["arguments"] == {"sql": insert} and grant["uses"] == 1


async def test_a_grant_the_call_cannot_have_is_422(http: httpx.AsyncClient) -> None:
    key = new_key()
    turns = Turns(http, key)
    request = (await turns.send("DELETE FROM orders WHERE id = 1; DELETE FROM orders WHERE id = 2"))[-1]
    assert asked_content(request)["grants"] == ["session"], "several statements have no command head"
    for body, expected in (
        ({"grant": "session_prefix"}, "possible: session"),
        ({"grant": "forever"}, "'forever' is not a grant; expected one of session, session_prefix"),
        ({"grant": "session", "arguments": {"sql": "SELECT 1"}}, "not both"),
    ):
        refused = await decide(
            http, key, asked(request).interaction_id, approved=True, principal="bob", response_data=body
        )
        assert refused.status_code == 422, refused.text
        assert expected in refused.json()["detail"]
    assert await grants(http, key) == []
