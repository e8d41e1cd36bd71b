"""MCP servers as tools, end to end: a stdio server written with the official SDK (started by the
worker), its tools gated like the builtin ones, its question mid-call answered over HTTP, and a
server that dies shown down."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from temporalio.client import Client

from core.settings import Settings

from ..conftest import assert_eventually
from ..support import serve_agents
from .test_sessions import new_key

SERVER = Path(__file__).resolve().parents[1] / "fakes" / "mcp_server.py"


@dataclass
class Stack:
    http: httpx.AsyncClient
    notes: Path
    pid_file: Path


def declarations(folder: Path, *, trust: bool = False) -> str:
    env = {"NOTES_FILE": str(folder / "notes.txt"), "PID_FILE": str(folder / "server.pid")}
    return (
        f'[mcp_servers.notes]\ncommand = "{sys.executable}"\nargs = ["{SERVER}"]\n'
        f"env = {{{', '.join(f'{k} = {json.dumps(v)}' for k, v in env.items())}}}\n"
        f"trust = {str(trust).lower()}\nping_seconds = 0.5\n"
        'exclude_tools = ["list_notes"]\n'
        '[agents.scribe]\nframework = "demo"\ntools = ["mcp__notes__*"]\n'
    )


@pytest.fixture
async def stack(client: Client, settings: Settings, tmp_path: Path) -> AsyncIterator[Stack]:
    async with serve_agents(client, settings, declarations(tmp_path), tmp_path) as http:
        yield Stack(http, tmp_path / "notes.txt", tmp_path / "server.pid")


async def say(http: httpx.AsyncClient, key: str, content: str) -> dict[str, Any]:
    sent = await http.post(
        f"/sessions/{key}/messages?wait=true", json={"content": content, "principal": "alice"}
    )
    assert sent.status_code in (200, 202), sent.text
    answer: dict[str, Any] = sent.json()
    return answer


async def scribe(http: httpx.AsyncClient) -> str:
    key = new_key()
    assert (
        await http.post("/sessions", json={"session_key": key, "agent_id": "Agent:scribe"})
    ).status_code == 201
    return key


async def test_the_servers_tools_are_listed_as_declared(stack: Stack) -> None:
    servers = (await stack.http.get("/mcp")).json()
    assert [(s["name"], s["transport"], s["state"], s["error"]) for s in servers] == [
        ("notes", "stdio", "up", None)
    ]
    assert [t["name"] for t in servers[0]["tools"]] == ["mcp__notes__add_note", "mcp__notes__greet"], (
        "list_notes excluded"
    )
    tools = {t["name"]: t for t in (await stack.http.get("/tools")).json()}
    assert {"sql", "terminal", "ask_user", "mcp__notes__add_note", "mcp__notes__greet"} == set(tools)
    note = tools["mcp__notes__add_note"]
    assert (note["source"], note["approval"], note["description"]) == (
        "mcp",
        "always",
        "Add a note to the notebook.",
    )
    assert note["arguments_schema"]["properties"]["text"]["type"] == "string"


async def test_a_call_is_asked_for_approved_and_its_result_comes_back(stack: Stack) -> None:
    key = await scribe(stack.http)
    asked = await say(stack.http, key, 'use: mcp__notes__add_note {"text": "buy milk"}')
    assert asked["status"] == "waiting", asked
    pending = asked["pending"]
    assert pending["content"]["tool_name"] == "mcp__notes__add_note"
    assert pending["content"]["tool_params"] == {"text": "buy milk"}
    assert not stack.notes.exists(), "nothing ran before the approval"
    decided = await stack.http.post(
        f"/sessions/{key}/interactions/{pending['interaction_id']}",
        json={"approved": True, "principal": "bob"},
    )
    assert decided.status_code == 200, decided.text
    assert decided.json()["tool_result"] == {
        "tool_id": "mcp__notes__add_note",
        "ok": True,
        "content": {"result": "noted (1 notes)"},
        "error": None,
        "said": None,
        "metadata": {},
        "artifact": None,
    }
    assert stack.notes.read_text() == "buy milk\n"
    kinds = [e["kind"] for e in (await stack.http.get(f"/sessions/{key}/audit")).json()["entries"]]
    assert kinds == ["requested", "approved"]


async def test_a_denied_call_never_reaches_the_server(stack: Stack) -> None:
    key = await scribe(stack.http)
    asked = await say(stack.http, key, 'use: mcp__notes__add_note {"text": "sell the car"}')
    denied = await stack.http.post(
        f"/sessions/{key}/interactions/{asked['pending']['interaction_id']}",
        json={"approved": False, "principal": "bob"},
    )
    assert denied.status_code == 200
    assert not stack.notes.exists()


async def test_the_servers_question_mid_call_is_answered_over_http(stack: Stack) -> None:
    key = await scribe(stack.http)
    asked = await say(stack.http, key, "use: mcp__notes__greet {}")
    approved = stack.http.post(
        f"/sessions/{key}/interactions/{asked['pending']['interaction_id']}",
        json={"approved": True, "principal": "bob"},
    )
    running = asyncio.ensure_future(approved)
    question = await assert_eventually(
        lambda: stack.http.get(f"/sessions/{key}"),
        lambda r: any(p["interaction_type"] == "user_input" for p in r.json()["pending_interactions"]),
        what="the server's question",
    )
    [request] = [p for p in question.json()["pending_interactions"] if p["interaction_type"] == "user_input"]
    assert request["content"]["question"] == "What is your name?"
    assert request["content"]["tool_name"] == "mcp__notes__greet"
    answered = await stack.http.post(
        f"/sessions/{key}/interactions/{request['interaction_id']}",
        json={"principal": "alice", "response_data": {"text": "Alice"}},
    )
    assert answered.status_code == 200, answered.text
    outcome = (await running).json()
    assert outcome["tool_result"]["content"] == {"result": "hello Alice"}, outcome


async def test_a_server_that_dies_is_shown_down_and_its_calls_say_so(stack: Stack) -> None:
    pid = int(stack.pid_file.read_text())
    os.kill(pid, signal.SIGKILL)
    down = await assert_eventually(
        lambda: stack.http.get("/mcp"),
        lambda r: r.json()[0]["state"] == "down",
        what="the server shown down",
    )
    server = down.json()[0]
    assert server["error"], server
    assert [t["name"] for t in server["tools"]] == ["mcp__notes__add_note", "mcp__notes__greet"], (
        "still listed"
    )


async def test_a_trusted_servers_calls_run_without_asking(
    client: Client, settings: Settings, tmp_path: Path
) -> None:
    async with serve_agents(client, settings, declarations(tmp_path, trust=True), tmp_path) as http:
        key = await scribe(http)
        ran = await say(http, key, 'use: mcp__notes__add_note {"text": "trusted"}')
        assert ran["status"] == "completed", ran
        assert (tmp_path / "notes.txt").read_text() == "trusted\n"


async def test_a_server_that_cannot_start_is_shown_down_and_the_worker_runs_on(
    client: Client, settings: Settings, tmp_path: Path
) -> None:
    broken = '[mcp_servers.gone]\ncommand = "/no/such/mcp-server"\n'
    async with serve_agents(client, settings, broken, tmp_path) as http:
        [server] = (await http.get("/mcp")).json()
        assert (server["name"], server["state"], server["tools"]) == ("gone", "down", [])
        assert "/no/such/mcp-server" in server["error"] or "No such file" in server["error"], server
        answer = await say(http, new_key(), "SELECT customer FROM orders WHERE id = 1")
        assert answer["answer"] == "SELECT returned 1 row:\ncustomer\nAlice", "the rest works"


async def test_a_question_the_person_declines_is_declined_to_the_server(stack: Stack) -> None:
    key = await scribe(stack.http)
    asked = await say(stack.http, key, "use: mcp__notes__greet {}")
    running = asyncio.ensure_future(
        stack.http.post(
            f"/sessions/{key}/interactions/{asked['pending']['interaction_id']}",
            json={"approved": True, "principal": "bob"},
        )
    )
    question = await assert_eventually(
        lambda: stack.http.get(f"/sessions/{key}"),
        lambda r: any(p["interaction_type"] == "user_input" for p in r.json()["pending_interactions"]),
        what="the server's question",
    )
    [request] = [p for p in question.json()["pending_interactions"] if p["interaction_type"] == "user_input"]
    declined = await stack.http.post(
        f"/sessions/{key}/interactions/{request['interaction_id']}",
        json={"approved": False, "principal": "alice"},
    )
    assert declined.status_code == 200, declined.text
    assert (await running).json()["tool_result"]["content"] == {"result": "no name given (decline)"}
