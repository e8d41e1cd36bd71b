"""`synapse run`, the real command in its own process, against a real API and worker: each exit
code, an approval from another channel while it waits, and `stream-json` read line by line."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from temporalio.client import Client

from contracts import SentChunk
from core.settings import Settings

from ..api.test_sessions import new_key
from ..conftest import assert_eventually
from ..fakes.chat_completions import FakeChatCompletions, fake_chat_completions
from ..support import free_port, serve_agents

SYNAPSE = str(Path(sys.executable).parent / "synapse")
SELECT = "SELECT customer FROM orders WHERE id = 1"
DELETE = "DELETE FROM orders WHERE id = 2"


@dataclass
class Ran:
    code: int
    out: str
    err: str


async def start(api: str, *args: str) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        SYNAPSE,
        "run",
        "--api",
        api,
        "--principal",
        "ci",
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )


async def finish(process: asyncio.subprocess.Process, within: float = 90) -> Ran:
    """Its exit code and output (killed, and its output shown, when it runs past `within`)."""
    talking = asyncio.ensure_future(process.communicate())
    done, _ = await asyncio.wait([talking], timeout=within)
    if not done:
        process.kill()
        out, err = await talking
        raise AssertionError(
            f"synapse run still ran after {within} s; out {out.decode()!r}, err {err.decode()!r}"
        )
    out, err = talking.result()
    assert process.returncode is not None
    return Ran(process.returncode, out.decode(), err.decode())


async def run(api: str, *args: str) -> Ran:
    return await finish(await start(api, *args))


def api_of(http: httpx.AsyncClient) -> str:
    return str(http.base_url).rstrip("/")


async def pending(http: httpx.AsyncClient, key: str) -> str:
    """The interaction the session waits on, once it does."""
    status = await assert_eventually(
        lambda: http.get(f"/sessions/{key}"),
        lambda r: r.status_code == 200 and bool(r.json()["pending_interactions"]),
        what="a request for a person",
        within=60,
    )
    interaction_id: str = status.json()["pending_interactions"][0]["interaction_id"]
    return interaction_id


async def test_an_answer_goes_to_stdout_and_exits_0(http: httpx.AsyncClient) -> None:
    ran = await run(api_of(http), "-p", SELECT, "--session", key := new_key())
    assert ran.code == 0, ran
    assert ran.out == "SELECT returned 1 row:\ncustomer\nAlice\n"
    assert f"session {key}: {SELECT}" in ran.err and "→ sql: SELECT customer" in ran.err


async def test_a_run_without_a_session_ends_the_one_it_started(http: httpx.AsyncClient) -> None:
    ran = await run(api_of(http), "-p", SELECT)
    assert ran.code == 0, ran
    key = ran.err.split(":", 1)[0].removeprefix("session ")
    assert (await http.get(f"/sessions/{key}")).json()["status"] == "cancelled"
    entries = (await http.get(f"/sessions/{key}/audit")).json()["entries"]
    assert [(e["kind"], e["principal"], e.get("comment")) for e in entries][-1:] == [
        ("cancelled", "ci", "synapse run ended (completed)")
    ], entries
    listed = await assert_eventually(
        lambda: http.get("/sessions", params={"limit": 500}),
        lambda r: any(s["session_key"] == key and s["closed"] for s in r.json()),
        what=f"{key} listed as ended",
    )
    assert all(s["status"] != "active" for s in listed.json() if s["session_key"] == key)


async def test_a_named_session_goes_on_after_the_run(http: httpx.AsyncClient) -> None:
    ran = await run(api_of(http), "-p", SELECT, "--session", key := new_key())
    assert ran.code == 0, ran
    assert (await http.get(f"/sessions/{key}")).json()["status"] == "active"


async def test_an_approval_from_another_channel_lets_it_finish(
    http: httpx.AsyncClient, count_orders: Any
) -> None:
    key = new_key()
    process = await start(api_of(http), "-p", DELETE, "--session", key)
    interaction_id = await pending(http, key)
    decided = await http.post(
        f"/sessions/{key}/interactions/{interaction_id}", json={"approved": True, "principal": "bob"}
    )
    assert decided.status_code == 200, decided.text
    ran = await finish(process)
    assert (ran.code, ran.out) == (0, "DELETE done: 1 row affected.\n"), ran
    assert f"? {interaction_id} waits for a person: sql: {DELETE}" in ran.err
    assert f"✓ {interaction_id} approved by bob" in ran.err
    assert count_orders("id = 2") == 0


async def test_a_denial_exits_3_with_the_agents_answer(http: httpx.AsyncClient, count_orders: Any) -> None:
    key = new_key()
    process = await start(api_of(http), "-p", DELETE, "--session", key, "--output-format", "json")
    interaction_id = await pending(http, key)
    denied = await http.post(
        f"/sessions/{key}/interactions/{interaction_id}",
        json={"approved": False, "principal": "bob", "user_message": "not today"},
    )
    assert denied.status_code == 200, denied.text
    ran = await finish(process)
    assert ran.code == 3, ran
    result = json.loads(ran.out)
    assert (result["exit"], result["status"], result["session_key"]) == ("denied", "completed", key)
    assert result["answer"] == 'I did not run sql: denied by bob (a person denied it) — "not today".'
    assert [(d["approved"], d["decided_by"]) for d in result["decisions"]] == [(False, "bob")]
    assert count_orders("id = 2") == 1


async def test_nobody_deciding_in_time_exits_4_and_cancels_the_turn(http: httpx.AsyncClient) -> None:
    key = new_key()
    ran = await run(api_of(http), "-p", DELETE, "--session", key, "--wait-approval", "1")
    assert ran.code == 4, ran
    assert "error: nobody decided tool_1 within 1 s; the turn was cancelled" in ran.err
    status = (await http.get(f"/sessions/{key}")).json()
    assert status["pending_interactions"] == [], "nothing is left waiting"
    entries = (await http.get(f"/sessions/{key}/audit")).json()["entries"]
    assert [(e["kind"], e["principal"]) for e in entries][1:] == [
        ("turn_cancelled", "ci"),
        ("denied", "system:cancel"),
    ], entries


async def test_bad_input_exits_2_naming_what_is_wrong(http: httpx.AsyncClient) -> None:
    unknown = await run(api_of(http), "-p", "hi", "--agent", "Agent:nope")
    assert unknown.code == 2 and "the API answered 422" in unknown.err and "Agent:nope" in unknown.err, (
        unknown
    )
    empty = await run(api_of(http), "-p", "  ")
    assert empty.code == 2 and "error: -p/--prompt is empty" in empty.err
    negative = await run(api_of(http), "-p", "hi", "--wait-approval", "-1")
    assert negative.code == 2 and "give a number of seconds above 0" in negative.err


async def test_an_api_that_cannot_be_reached_exits_5() -> None:
    ran = await run(f"http://127.0.0.1:{free_port()}", "-p", SELECT)
    assert ran.code == 5 and "could not be reached" in ran.err, ran


async def test_stream_json_is_one_event_per_line_then_the_result(http: httpx.AsyncClient) -> None:
    ran = await run(api_of(http), "-p", SELECT, "--output-format", "stream-json")
    assert ran.code == 0, ran
    lines = [json.loads(line) for line in ran.out.splitlines()]
    *events, result = lines
    chunks = [SentChunk.model_validate(line) for line in events]
    assert [c.chunk_type for c in chunks][:1] == ["processing"] and chunks[-1].is_final
    assert [c.sequence_id for c in chunks] == sorted(c.sequence_id for c in chunks)
    assert result["type"] == "result" and result["exit_code"] == 0
    assert result["answer"] == "SELECT returned 1 row:\ncustomer\nAlice"
    assert [c["tool"] for c in result["tool_calls"]] == ["sql"] and result["tool_calls"][0]["result"]["ok"]


@pytest.fixture
async def failing(
    client: Client, settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[tuple[httpx.AsyncClient, FakeChatCompletions]]:
    monkeypatch.setenv("REMOTE_MODEL_KEY", "sk-test")
    async with fake_chat_completions() as fake:
        toml = (
            f'[agents.remote]\nframework = "langgraph"\nmodel = "fake-model"\nbase_url = "{fake.base_url}"\n'
            'api_key_env = "REMOTE_MODEL_KEY"\n'
        )
        async with serve_agents(client, settings, toml, tmp_path) as http:
            yield http, fake


async def test_an_agent_that_fails_exits_1_saying_why(
    failing: tuple[httpx.AsyncClient, FakeChatCompletions],
) -> None:
    http, fake = failing
    fake.enqueue(fake.error(401, "Incorrect API key provided", code="invalid_api_key"))
    ran = await run(api_of(http), "-p", "hello", "--agent", "Agent:remote")
    assert ran.code == 1, ran
    assert "Incorrect API key provided" in ran.err and ran.out == ""
