"""How an AG-UI run fails, live: a turn whose agent fails ends the run with `RUN_ERROR` (its code the
reason), a new message to a cancelled thread is refused as the HTTP door refuses it (409, saying who
cancelled it), and a run on a `synapse api` process that is stopped (SIGTERM) mid-turn ends with
`RUN_ERROR` `stream_ended`, never silently (the client takes a cut stream for a finished run). The
agent is a declared one on the loopback stand-in model server (tests/fakes)."""

from __future__ import annotations

import asyncio
import signal
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
import pytest
from ag_ui.core import EventType
from temporalio.client import Client

from api.main import create_app
from core.settings import Settings
from worker import build_worker

from ...conftest import assert_eventually
from ...fakes.chat_completions import FakeChatCompletions, fake_chat_completions, text
from ...faults.processes import Children, start_api
from ...support import declaring, serve
from .test_runs import KEYS, bearer, keyed, of, run, run_input

KEY = "sk-test-not-a-real-key"
AGENT = "Agent:remote"
SLOW_REPLY = 8.0
"""Seconds the stand-in model takes to answer while the test cuts the run's stream."""


@asynccontextmanager
async def declared_api(
    client: Client, settings: Settings, fake: FakeChatCompletions, folder: Path
) -> AsyncIterator[httpx.AsyncClient]:
    """The app (with the tests' keys) and a worker, `Agent:remote` declared on the stand-in (in
    `folder`/agents.toml)."""
    declared = declaring(
        keyed(settings),
        f'[agents.remote]\nframework = "langgraph"\nmodel = "fake-model"\nbase_url = "{fake.base_url}"\n'
        'api_key_env = "REMOTE_MODEL_KEY"\ninstruction = "You run SQL for the user."\ntools = ["sql"]\n',
        folder,
    )
    async with build_worker(client, declared), serve(create_app(declared, client=client)) as http:
        yield http


@pytest.fixture
async def fake(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[FakeChatCompletions]:
    monkeypatch.setenv("REMOTE_MODEL_KEY", KEY)
    async with fake_chat_completions() as server:
        yield server


async def test_a_failed_turn_ends_the_run_with_run_error_and_its_reason(
    client: Client, settings: Settings, fake: FakeChatCompletions, tmp_path: Path
) -> None:
    fake.enqueue(fake.error(401, f"Incorrect API key provided: {KEY}", code="invalid_api_key"))
    async with declared_api(client, settings, fake, tmp_path) as http:
        thread = f"t-{uuid.uuid4().hex[:8]}"
        frames = await run(http, run_input(thread, "How many orders are there?"), path=f"/ag-ui/{AGENT}")
        failed = frames[-1]
        assert failed.type == EventType.RUN_ERROR and failed.code == "agent_failed", frames
        assert "The agent failed (AUTHENTICATION_FAILED)" in failed.message and "HTTP 401" in failed.message
        assert KEY not in failed.message
        assert not of(frames, EventType.RUN_FINISHED), "nothing follows RUN_ERROR"
        again = await run(http, run_input(thread, "How many orders are there?", "and now?"))
        assert again[-1].type == EventType.RUN_FINISHED, "the thread goes on: the next message is answered"


async def test_a_new_message_to_a_cancelled_thread_is_refused_as_the_http_door_refuses_it(
    client: Client, settings: Settings, fake: FakeChatCompletions, tmp_path: Path
) -> None:
    async with declared_api(client, settings, fake, tmp_path) as http:
        thread = f"t-{uuid.uuid4().hex[:8]}"
        key = f"agui:{thread}"
        assert (await run(http, run_input(thread, "hello")))[-1].type == EventType.RUN_FINISHED
        cancelled = await http.post(
            f"/sessions/{key}/cancel", json={"reason": "done"}, headers=bearer("k-ok")
        )
        assert cancelled.status_code == 200, cancelled.text
        refused = await http.post("/ag-ui", json=run_input(thread, "hello", "again"), headers=bearer("k-op"))
        assert refused.status_code == 409, refused.text
        detail = refused.json()["detail"]
        assert f"session {key!r} was cancelled by ann at " in detail and " UTC (done)" in detail
        door = await http.post(f"/sessions/{key}/messages", json={"content": "again"}, headers=bearer("k-op"))
        assert (door.status_code, door.json()["detail"]) == (409, detail), "the same refusal, word for word"
        session = (await http.get(f"/sessions/{key}", headers=bearer("k-view"))).json()
        assert session["status"] == "cancelled", "no new run started"


async def fake_asked(fake: FakeChatCompletions) -> bool:
    return bool(fake.requests)


async def test_a_run_on_an_api_process_that_stops_ends_with_run_error_stream_ended(
    client: Client,
    settings: Settings,
    fake: FakeChatCompletions,
    tmp_path: Path,
    request: pytest.FixtureRequest,
) -> None:
    fake.enqueue(text("late", delay=SLOW_REPLY))
    async with declared_api(client, settings, fake, tmp_path):
        children = Children(tmp_path)
        request.addfinalizer(children.kill_all)
        api, url = await start_api(
            children,
            client,
            settings,
            SYNAPSE_API_KEYS=KEYS,
            SYNAPSE_AGENTS_FILE=str(tmp_path / "agents.toml"),
        )
        async with httpx.AsyncClient(base_url=url, timeout=30) as http:
            thread = f"t-{uuid.uuid4().hex[:8]}"
            running = asyncio.create_task(run(http, run_input(thread, "hello"), path=f"/ag-ui/{AGENT}"))
            await assert_eventually(lambda: fake_asked(fake), bool, what="the model asked (the turn runs)")
            assert await api.terminate() in (0, -signal.SIGTERM), "a clean stop"
            frames = await running
        cut = frames[-1]
        assert cut.type == EventType.RUN_ERROR and cut.code == "stream_ended", frames
        assert "the API is stopping; reconnect" in cut.message
        assert not of(frames, EventType.RUN_FINISHED)
