"""A session's free SQL read that takes too long is stopped, and the session answers why, once
(`SYNAPSE_SQL_READ_TIMEOUT_SECONDS`, issue 47): not a failed turn, not a retried tool run."""

from __future__ import annotations

import time
import uuid

from temporalio.client import Client

from api.main import create_app
from contracts import TaskChunkType
from core.settings import Settings
from worker import build_worker

from ..support import collect_events, serve

LIMIT = 0.5
SLOW_READ = (
    "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 1000000000) "
    "SELECT count(*) FROM c"
)


async def test_a_slow_read_is_stopped_and_the_session_answers_why(client: Client, settings: Settings) -> None:
    limited = settings.model_copy(
        update={"tools": settings.tools.model_copy(update={"sql_read_timeout_seconds": LIMIT})}
    )
    key = f"slow-{uuid.uuid4().hex[:10]}"
    async with build_worker(client, limited), serve(create_app(limited, client=client)) as http:
        started = time.monotonic()
        sent = await http.post(
            f"/sessions/{key}/messages", params={"wait": "true"}, json={"content": SLOW_READ}
        )
        took = time.monotonic() - started
        chunks = await collect_events(http, key, lambda c: c.chunk_type == TaskChunkType.COMPLETE)

    assert sent.status_code == 200, sent.text
    assert f"stopped after {LIMIT:g} s" in sent.json()["answer"], sent.json()
    assert took < 10, f"the turn took {took:.1f} s: the read was retried or not stopped"
    used = [c for c in chunks if c.chunk_type == TaskChunkType.TOOL_USE]
    assert len(used) == 1, "the read ran once, without asking anyone"
    assert not [c for c in chunks if c.chunk_type == TaskChunkType.TOOL_APPROVAL_REQUEST]
