"""`synapse api` stopped with SIGTERM ends its open event streams first, with the `reconnect` event a
client resumes from, instead of cutting them once its grace period is over."""

from __future__ import annotations

import asyncio
import signal
import uuid
from pathlib import Path

import httpx
import pytest
from temporalio.client import Client

from cli.serve import API_STREAMS_GRACE
from core.settings import Settings

from ..conftest import assert_eventually
from ..faults.processes import Children, start_api


async def test_a_stopping_api_ends_an_open_event_stream_with_reconnect(
    client: Client, settings: Settings, worker: None, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    children = Children(tmp_path)
    request.addfinalizer(children.kill_all)
    api, url = await start_api(children, client, settings)
    key = f"serve-{uuid.uuid4().hex[:8]}"
    async with httpx.AsyncClient(base_url=url, timeout=30) as http:
        sent = await http.post(
            f"/sessions/{key}/messages", json={"content": "hello"}, params={"wait": "true"}
        )
        assert sent.status_code == 200, sent.text
        said: list[str] = []

        async def follow() -> None:
            async with http.stream("GET", f"/sessions/{key}/events") as events:
                async for text in events.aiter_text():
                    said.append(text)

        following = asyncio.create_task(follow())
        await assert_eventually(
            lambda: _joined(said), lambda text: "turn_completed" in text, what="the stream"
        )
        loop = asyncio.get_running_loop()
        stopped_at = loop.time()
        assert await api.terminate() in (0, -signal.SIGTERM)
        await following  # the stream ended, not cut: no RemoteProtocolError
    assert loop.time() - stopped_at < API_STREAMS_GRACE + 5
    events = "".join(said).rstrip("\n").split("\n\n")
    assert events[-1].startswith("event: reconnect") and "the API is stopping" in events[-1], events[-1]


async def _joined(said: list[str]) -> str:
    return "".join(said)
