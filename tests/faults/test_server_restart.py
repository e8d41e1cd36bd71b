"""Pending approvals live in Temporal: they survive the dev server stopping and starting again.

This test runs a dev server of its own (the shared one must not restart), persisting to a
SQLite file, stops it with SIGTERM while three sessions wait, starts it again on the same file
and port, and decides the three approvals.
"""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

from temporalio.client import Client, WorkflowExecutionStatus

from activities.tools.sql.database import SEED_ORDERS
from api.calls import sessions as session_calls
from api.main import create_app
from contracts import InboundMessage, SessionConfig
from core.settings import Settings
from worker import build_worker
from workflows.identity import search_attributes
from workflows.identity.ids import session_workflow_id

from ..support import serve
from .conftest import DemoDb
from .flows import audit, decisions, increment, status, tool_results, wait_answer, wait_pending
from .processes import Children, DevServer

TEST_BOUND = 120.0
DECISIONS = [True, False, True]
"""What bob decides on the sessions' approvals, in order; session n increments order n + 1."""
SEEDED_AMOUNT = {order_id: amount for order_id, _customer, amount, _status in SEED_ORDERS}


async def start_sessions(client: Client, settings: Settings, keys: list[str]) -> dict[str, str]:
    """Start the sessions, each asking for one approval; their interaction ids."""
    async with build_worker(client, settings), serve(create_app(settings, client=client)) as http:
        for n, key in enumerate(keys):
            message = InboundMessage(content=increment(n + 1), sender_id="alice", chat_id="test")
            await session_calls.send_message(
                client, settings.temporal.task_queue, SessionConfig(session_key=key), message
            )
        ids = await asyncio.gather(*(wait_pending(http, key) for key in keys))
    return dict(zip(keys, ids, strict=True))


async def test_pending_approvals_survive_a_server_restart(
    children: Children, settings: Settings, tmp_path: Path, demo_db: DemoDb
) -> None:
    server = DevServer(children, tmp_path / "temporal.db")
    keys = [f"restart-{uuid.uuid4().hex[:8]}-{n}" for n in range(len(DECISIONS))]
    async with asyncio.timeout(TEST_BOUND):
        pending = await start_sessions(await server.start(), settings, keys)
        await server.stop()

        client = await server.start()
        for key in keys:  # the server alone (no worker yet) still knows who waits
            description = await client.get_workflow_handle(session_workflow_id(key)).describe()
            assert description.status == WorkflowExecutionStatus.RUNNING
            assert description.typed_search_attributes.get(search_attributes.STATUS) == "waiting_approval"
            assert description.typed_search_attributes.get(search_attributes.PENDING) == 1
        async with build_worker(client, settings), serve(create_app(settings, client=client)) as http:
            for key in keys:
                session = await status(http, key)
                assert session.status == "waiting_approval"
                assert [p.interaction_id for p in session.pending_interactions] == [pending[key]]
            for key, approved in zip(keys, DECISIONS, strict=True):
                response = await http.post(
                    f"/sessions/{key}/interactions/{pending[key]}",
                    json={"approved": approved, "principal": "bob"},
                )
                assert response.status_code == 200, response.text
            answers = [await wait_answer(http, key) for key in keys]
            for key, approved in zip(keys, DECISIONS, strict=True):
                verb = "approved" if approved else "denied"
                assert decisions(await audit(http, key), pending[key]) == [(verb, "bob", "http")]
    for n, (approved, session) in enumerate(zip(DECISIONS, answers, strict=True)):
        expected = SEEDED_AMOUNT[n + 1] + (1 if approved else 0)
        assert demo_db.amount(n + 1) == expected, (
            f"order {n + 1} was {'approved' if approved else 'denied'}: its amount must be {expected}, "
            f"got {demo_db.amount(n + 1)}; the session's tool result: {tool_results(session)}"
        )
