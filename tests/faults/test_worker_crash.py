"""A worker killed with SIGKILL loses nothing: not a pending approval, not a half-run statement.

The worker is a real `synapse worker` process; the approver uses the real HTTP API (served
here, with no worker in the test process). Recovery may take up to `RECOVERY_WITHIN` seconds.
"""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

import httpx
import pytest
from temporalio.client import Client

from activities.tools.sql.database import PAUSE_FILE_ENV, SEED_ORDERS
from core.settings import Settings

from .conftest import DemoDb
from .flows import RECOVERY_WITHIN, ask, audit, decisions, increment, tool_results, wait_answer, wait_pending
from .processes import Children, start_worker

TEST_BOUND = 150.0
"""Seconds one test may take in all: two worker starts plus the recovery bound."""
DELETE_ONE = "DELETE FROM orders WHERE id = (SELECT MIN(id) FROM orders WHERE status = 'cancelled')"
"""Deletes one cancelled order per application, so a second application would show."""


@pytest.mark.slow
async def test_a_worker_killed_while_an_approval_waits_loses_nothing(
    client: Client, settings: Settings, children: Children, api: httpx.AsyncClient, demo_db: DemoDb
) -> None:
    key = f"kill-wait-{uuid.uuid4().hex[:8]}"
    async with asyncio.timeout(TEST_BOUND):
        first = await start_worker(children, client, settings)
        await ask(api, key, DELETE_ONE)
        interaction_id = await wait_pending(api, key)

        await first.kill()
        await start_worker(children, client, settings)
        response = await api.post(
            f"/sessions/{key}/interactions/{interaction_id}",
            json={"approved": True, "principal": "bob"},
            timeout=RECOVERY_WITHIN,
        )

        assert response.status_code == 200, response.text
        outcome = response.json()
        assert (outcome["approved"], outcome["decided_by"]) == (True, "bob")
        assert outcome["tool_result"]["ok"] is True and outcome["tool_result"]["content"]["rowcount"] == 1
        session = await wait_answer(api, key)
        assert session.messages[-1].content == "DELETE done: 1 row affected."
        trail = await audit(api, key)
        assert decisions(trail, interaction_id) == [("approved", "bob", "http")]
    assert demo_db.count() == len(SEED_ORDERS) - 1, "the DELETE must be applied exactly once"
    assert demo_db.count("id = 2") == 0 and demo_db.count("status = 'cancelled'") == 2


@pytest.mark.slow
@pytest.mark.parametrize("sql_backend", ["sqlite", "postgresql"])
async def test_a_worker_killed_mid_statement_applies_it_exactly_once(
    client: Client,
    settings: Settings,
    children: Children,
    api: httpx.AsyncClient,
    demo_db: DemoDb,
    tmp_path: Path,
) -> None:
    key = f"kill-run-{uuid.uuid4().hex[:8]}"
    pause = tmp_path / "pause-before-commit"
    before = demo_db.amount(1)
    async with asyncio.timeout(TEST_BOUND):
        first = await start_worker(children, client, settings, **{PAUSE_FILE_ENV: str(pause)})
        await ask(api, key, increment(1))
        interaction_id = await wait_pending(api, key)

        pause.touch()
        approval = asyncio.create_task(
            api.post(
                f"/sessions/{key}/interactions/{interaction_id}",
                json={"approved": True, "principal": "bob"},
                timeout=RECOVERY_WITHIN + 30,
            )
        )
        try:
            await first.wait_for_output("pausing before commit", within=30)
            await first.kill()
            assert demo_db.amount(1) == before, "the killed attempt must not have committed anything"
            pause.unlink()
            await start_worker(children, client, settings)

            session = await wait_answer(api, key)
            # The approver's request outlived the crash: it answers the outcome, or 202 when the
            # API's own wait (60 s) ran out first; never an error.
            response = await approval
            assert response.status_code in (200, 202), response.text
            if response.status_code == 200:
                assert response.json()["tool_result"]["content"]["rowcount"] == 1
        finally:
            approval.cancel()

        results = tool_results(session)
        assert len(results) == 1 and results[0]["ok"] is True, results
        assert results[0]["content"]["rowcount"] == 1
        assert session.messages[-1].content == "UPDATE done: 1 row affected."
        trail = await audit(api, key)
        assert decisions(trail, interaction_id) == [("approved", "bob", "http")]
    assert demo_db.amount(1) == before + 1, f"applied once means {before + 1}, got {demo_db.amount(1)}"
