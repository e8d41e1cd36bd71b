"""Exactly-once is per approval, not per interaction number: sessions of one deployment share a database.

Every session numbers its interactions `tool_1`, `tool_2`, ...; two approvals of a `tool_1` in
two sessions, or in two runs of one session key, are two approvals, so both statements must run.
"""

from __future__ import annotations

import asyncio
import uuid

import httpx
import pytest

from .conftest import DemoDb
from .flows import ask, increment, status, tool_results, wait_answer, wait_pending

TEST_BOUND = 30.0


async def approve_first_call(api: httpx.AsyncClient, key: str) -> None:
    """Ask the session to increment order 1 and approve its request, `tool_1`."""
    await ask(api, key, increment(1))
    interaction_id = await wait_pending(api, key)
    assert interaction_id == "tool_1"
    response = await api.post(
        f"/sessions/{key}/interactions/{interaction_id}", json={"approved": True, "principal": "bob"}
    )
    assert response.status_code == 200, response.text


@pytest.mark.usefixtures("worker")
async def test_two_sessions_approving_their_first_statement_both_apply(
    api: httpx.AsyncClient, demo_db: DemoDb
) -> None:
    before = demo_db.amount(1)
    keys = [f"shared-{uuid.uuid4().hex[:8]}-{n}" for n in range(2)]
    async with asyncio.timeout(TEST_BOUND):
        for key in keys:
            await approve_first_call(api, key)
        sessions = [await wait_answer(api, key) for key in keys]
    second = tool_results(sessions[1])
    assert demo_db.amount(1) == before + 2, (
        f"two approved increments must give {before + 2}, got {demo_db.amount(1)}; "
        f"the second session's tool result: {second}"
    )


@pytest.mark.usefixtures("worker")
async def test_a_session_key_used_again_after_cancel_applies_its_statements(
    api: httpx.AsyncClient, demo_db: DemoDb
) -> None:
    before = demo_db.amount(1)
    key = f"again-{uuid.uuid4().hex[:8]}"
    async with asyncio.timeout(TEST_BOUND):
        await approve_first_call(api, key)
        await wait_answer(api, key)
        response = await api.post(f"/sessions/{key}/cancel", json={"reason": "done"})
        assert response.status_code == 200, response.text
        assert (await status(api, key)).status == "cancelled"

        refused = await api.post(f"/sessions/{key}/messages", json={"content": increment(1)})
        assert refused.status_code == 409 and "POST /sessions" in refused.json()["detail"], refused.text
        again = await api.post("/sessions", json={"session_key": key})  # as the 409 says
        assert again.status_code == 201, again.text
        await approve_first_call(api, key)  # the same key, a new session, numbering from tool_1
        session = await wait_answer(api, key)
    assert demo_db.amount(1) == before + 2, (
        f"two approved increments must give {before + 2}, got {demo_db.amount(1)}; "
        f"the new session's tool result: {tool_results(session)}"
    )
