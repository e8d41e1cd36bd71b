"""Artifacts and claim-checked payloads outlive the processes: a worker killed and the server
restarted, a session still reads its 3 MB result and its 1.5 MB message, and answers again.

The server is this test's own (the shared one must not restart), persisting to a SQLite file; the
worker is a separate `synapse worker` process, SIGKILLed; the API runs in the test with its limits
raised so a 1.5 MB message is accepted and travels through history by reference only.
"""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

import httpx
import pytest

from api.main import create_app
from contracts import LiveSession
from core.connect import synapse_converter
from core.settings import LimitSettings, Settings

from ..conftest import assert_eventually
from ..support import serve
from .flows import RECOVERY_WITHIN, answered, ask, status
from .processes import Children, DevServer, start_worker

TEST_BOUND = 180.0
MB = 1024 * 1024
BIG_SELECT = (
    "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 10000) "
    "SELECT i, printf('%.320c', 'r') AS filler FROM n"
)
PASTED_LOG = "2026-11-22 ERROR disk full on /var\n" * 45_000
"""About 1.5 MB: over the claim-check threshold, so history holds only its reference."""


async def artifact_of_last_result(http: httpx.AsyncClient, key: str) -> str:
    """The artifact id of the tool result the agent reported last."""
    session = await status(http, key)
    tool = next(m for m in reversed(session.messages) if m.role == "tool")
    assert isinstance(tool.content, dict) and tool.content["artifact"], tool.content
    artifact_id: str = tool.content["artifact"]["artifact_id"]
    return artifact_id


@pytest.mark.slow
async def test_artifacts_and_large_payloads_survive_a_killed_worker_and_a_server_restart(
    children: Children, settings: Settings, tmp_path: Path
) -> None:
    roomy = settings.model_copy(
        update={"limits": LimitSettings(max_request_bytes=4 * MB, max_message_bytes=3 * MB)}
    )
    converter = synapse_converter(roomy)
    server = DevServer(children, tmp_path / "temporal.db")
    key = f"survive-{uuid.uuid4().hex[:8]}"
    async with asyncio.timeout(TEST_BOUND):
        client = await server.start(converter)
        worker = await start_worker(children, client, roomy)
        async with serve(create_app(roomy, client=client)) as http:
            await ask(http, key, BIG_SELECT)
            await wait_reply(http, key, BIG_SELECT)
            artifact_id = await artifact_of_last_result(http, key)
            await ask(http, key, PASTED_LOG)
            await wait_reply(http, key, PASTED_LOG)
        await worker.kill()
        await server.stop()

        client = await server.start(converter)
        await start_worker(children, client, roomy)
        async with serve(create_app(roomy, client=client)) as http:
            whole = await http.get(f"/artifacts/{artifact_id}")
            assert whole.status_code == 200, whole.text
            assert len(whole.json()["rows"]) == 10000
            page = await http.get(f"/sessions/{key}/messages", params={"limit": 50})
            assert page.status_code == 200, page.text
            said = [m["content"] for m in page.json()["messages"] if m["role"] == "user"]
            assert said == [BIG_SELECT, PASTED_LOG], "the 1.5 MB message comes back whole"
            await ask(http, key, "SELECT COUNT(*) FROM orders")
            answer = await wait_reply(http, key, "SELECT COUNT(*) FROM orders")
            assert answer.messages[-1].content == "SELECT returned 1 row:\nCOUNT(*)\n8", answer.messages[-1]


async def wait_reply(http: httpx.AsyncClient, key: str, sent: str) -> LiveSession:
    """Wait until the agent answered `sent` (the latest message); the session then."""

    def replied(session: LiveSession) -> bool:
        latest = next((m for m in reversed(session.messages) if m.role == "user"), None)
        return answered(session) and latest is not None and latest.content == sent

    return await assert_eventually(
        lambda: status(http, key), replied, within=RECOVERY_WITHIN, interval=0.2, what="the reply"
    )
