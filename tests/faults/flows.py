"""A session as a user drives it over HTTP: ask, see the approval request, decide, read the answer."""

from __future__ import annotations

from typing import Any

import httpx

from contracts import AuditTrail, LiveSession

from ..conftest import assert_eventually

RECOVERY_WITHIN = 60.0
"""Seconds a session gets to recover from a fault (the product aims at ~30 s)."""
PROBE_TIMEOUT = 5.0
"""Seconds one status read may take; a read that finds no worker fails and is retried."""


def increment(order_id: int) -> str:
    """A statement whose second application would show: the order's amount goes up by 1 each time."""
    return f"UPDATE orders SET amount = amount + 1 WHERE id = {order_id}"


async def ask(http: httpx.AsyncClient, key: str, content: str, principal: str = "alice") -> None:
    """Send a message to the session (starting it)."""
    response = await http.post(f"/sessions/{key}/messages", json={"content": content, "principal": principal})
    assert response.status_code == 202, response.text


async def status(http: httpx.AsyncClient, key: str) -> LiveSession:
    """`GET /sessions/{key}` (fails, to be retried, while no worker can answer)."""
    response = await http.get(f"/sessions/{key}", timeout=PROBE_TIMEOUT)
    assert response.status_code == 200, response.text
    return LiveSession.model_validate(response.json())


async def audit(http: httpx.AsyncClient, key: str) -> AuditTrail:
    """`GET /sessions/{key}/audit`."""
    response = await http.get(f"/sessions/{key}/audit", timeout=PROBE_TIMEOUT)
    assert response.status_code == 200, response.text
    return AuditTrail.model_validate(response.json())


async def wait_pending(http: httpx.AsyncClient, key: str, *, within: float = 30.0) -> str:
    """Wait until the session waits for an approval; the interaction id."""
    session = await assert_eventually(
        lambda: status(http, key),
        lambda s: s.status == "waiting_approval" and len(s.pending_interactions) == 1,
        within=within,
        what=f"session {key!r} waiting for approval",
    )
    return session.pending_interactions[0].interaction_id


def answered(session: LiveSession) -> bool:
    """Whether the agent answered the latest message: the turn is over, no tool call is under way."""
    if not session.messages or session.pending_interactions:
        return False
    last = session.messages[-1]
    proposes_a_tool = isinstance(last.content, dict) and "tool_call" in last.content
    return last.role == "assistant" and not proposes_a_tool


async def wait_answer(http: httpx.AsyncClient, key: str, *, within: float = RECOVERY_WITHIN) -> LiveSession:
    """Wait until the agent answered; the session then."""
    return await assert_eventually(
        lambda: status(http, key),
        answered,
        within=within,
        interval=0.2,
        what=f"the agent's answer in {key!r}",
    )


def decisions(trail: AuditTrail, interaction_id: str) -> list[tuple[str, str, str]]:
    """(kind, principal, channel) of every decision recorded on the interaction."""
    return [
        (entry.kind, entry.principal, entry.channel)
        for entry in trail.entries
        if entry.interaction_id == interaction_id and entry.kind in ("approved", "denied")
    ]


def tool_results(session: LiveSession) -> list[Any]:
    """Contents of the session's tool messages (results and denials), oldest first."""
    return [message.content for message in session.messages if message.role == "tool"]
