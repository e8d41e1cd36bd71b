"""What a declared agent's model is given besides the conversation, end to end over HTTP: past turns
and task results recalled by `experience_config`, the artifact of `artifact_config` (SUMMARY and
FULL), and uploads attached to a message. The model is the loopback chat-completions stand-in,
so each assertion reads the request body the model received."""

from __future__ import annotations

import hashlib
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from temporalio.client import Client

from contracts import GraphStatus, TaskChunkType, TaskStreamChunk, TurnAnswered
from core.settings import Settings

from ..conftest import assert_eventually
from ..fakes.chat_completions import FakeChatCompletions, fake_chat_completions
from ..support import collect_events, event_of, serve_agents
from .test_sessions import new_key

KEY = "sk-test-not-a-real-key"
MARKER = "MIDDLE-OF-THE-HANDBOOK-7731"
"""Written in the middle of the handbook: only a FULL read shows it."""
HANDBOOK = (
    "Refund handbook, first line.\n"
    + "".join(f"rule {n}: refunds over {n * 10} EUR need a second look.\n" for n in range(150))
    + f"{MARKER}\n"
    + "".join(f"note {n}: keep the receipt of refund {n}.\n" for n in range(150))
    + "Refund handbook, last line.\n"
).encode()
HANDBOOK_ID = "art_" + hashlib.sha256(HANDBOOK).hexdigest()


def agents_file(fake: FakeChatCompletions) -> str:
    """Agents on the stand-in model: plain (`reader`, also on ADK), recalling, and reading the handbook."""

    def agent(name: str, framework: str = "langgraph", context: str = "") -> str:
        declared = (
            f'[agents.{name}]\nframework = "{framework}"\nmodel = "fake-model"\n'
            f'base_url = "{fake.base_url}"\napi_key_env = "REMOTE_MODEL_KEY"\n'
            'instruction = "You help with refunds."\ntools = []\n'
        )
        return declared + (f"[agents.{name}.context]\n{context}\n" if context else "")

    return "\n".join(
        [
            agent("reader"),
            agent("reader-adk", framework="adk"),
            agent("recall", context="experience_config = { top_k = 3 }"),
            agent("summary", context=f'artifact_config = {{ asset_id = "{HANDBOOK_ID}", mode = "SUMMARY" }}'),
            agent("full", context=f'artifact_config = {{ asset_id = "{HANDBOOK_ID}", mode = "FULL" }}'),
        ]
    )


@pytest.fixture
async def fake() -> AsyncIterator[FakeChatCompletions]:
    async with fake_chat_completions() as server:
        yield server


@pytest.fixture
async def api(
    client: Client,
    settings: Settings,
    fake: FakeChatCompletions,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> AsyncIterator[httpx.AsyncClient]:
    """The API and a worker with the agents of `agents_file` declared."""
    monkeypatch.setenv("REMOTE_MODEL_KEY", KEY)
    async with serve_agents(client, settings, agents_file(fake), tmp_path) as http:
        yield http


def answered(chunk: TaskStreamChunk) -> bool:
    return chunk.chunk_type == TaskChunkType.RESPONSE


async def converse(
    http: httpx.AsyncClient, agent: str, content: str, project: str | None = None, **extra: Any
) -> str:
    """One turn of a new session of `Agent:<agent>` (in `project`); the agent's answer."""
    key = new_key()
    created = await http.post(
        "/sessions", json={"session_key": key, "agent_id": f"Agent:{agent}", "project": project}
    )
    assert created.status_code == 201, created.text
    sent = await http.post(
        f"/sessions/{key}/messages", json={"content": content, "principal": "alice", **extra}
    )
    assert sent.status_code == 202, sent.text
    chunks = await collect_events(http, key, answered, within=60)
    return str(event_of(chunks[-1], TurnAnswered).answer)


def sent_to_model(fake: FakeChatCompletions) -> list[tuple[str, str]]:
    """The messages of the model's latest request as (role, text)."""
    messages = fake.requests[-1]["messages"]
    return [
        (m["role"], m["content"] if isinstance(m["content"], str) else json.dumps(m["content"]))
        for m in messages
    ]


def context_of(fake: FakeChatCompletions) -> list[str]:
    """The system messages of the model's latest request, the agent's instruction left out."""
    return [
        text for role, text in sent_to_model(fake) if role == "system" and text != "You help with refunds."
    ]


async def indexed(http: httpx.AsyncClient, query: str, count: int) -> list[dict[str, Any]]:
    """What `GET /experience` recalls for `query`, once `count` records match."""

    async def recalled() -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = (await http.get("/experience", params={"query": query})).json()
        return found

    return await assert_eventually(recalled, lambda m: len(m) == count, within=60, what=f"{count} indexed")


async def test_experience_config_puts_the_recalled_past_turn_before_the_conversation(
    api: httpx.AsyncClient, fake: FakeChatCompletions
) -> None:
    past = "The refund code for Zanzibar is ZX-4471"
    assert await converse(api, "reader", past) == f"You said: {past}"
    question = "What is the refund code for Zanzibar?"
    [match] = await indexed(api, question, 1)
    assert (match["question"], match["asked_by"], match["agent_id"]) == (past, "alice", "Agent:reader")

    assert await converse(api, "recall", question) == f"You said: {question}"
    [recalled] = context_of(fake)
    when = match["at"][:16].replace("T", " ")
    assert recalled == (
        "Relevant past experience (finished turns, best match first):\n"
        f"1. {when} UTC, alice asked Agent:reader (answer):\n"
        f"   Q: {past}\n   A: You said: {past}"
    )
    assert sent_to_model(fake)[1:] == [("system", recalled), ("user", question)], (
        "the recalled turn comes first, then the conversation"
    )


async def test_an_agent_recalls_only_its_own_projects_turns(
    api: httpx.AsyncClient, fake: FakeChatCompletions
) -> None:
    past = "The Quokka ledger key is QL-2210"
    await converse(api, "reader", past, project="billing")
    question = "What is the Quokka ledger key?"
    [match] = await indexed(api, question, 1)
    assert match["project"] == "billing"

    await converse(api, "recall", question, project="shop")
    assert context_of(fake) == [], "a shop session recalls none of billing's turns"
    await converse(api, "recall", question)
    assert context_of(fake) == [], "nor does a session of no project"
    await converse(api, "recall", question, project="billing")
    [recalled] = context_of(fake)
    assert f"Q: {past}" in recalled, "billing's own session recalls it"


async def test_experience_config_recalls_a_graph_tasks_result(
    api: httpx.AsyncClient, fake: FakeChatCompletions
) -> None:
    output = "Zanzibar refunds were settled by Ivo on Tuesday"
    blueprint = {
        "new_tasks": [{"task_id": "settle", "assignee_id": "Agent:demo", "input_data": {"echo": output}}]
    }
    created = await api.post("/graphs", json={"blueprint": blueprint})
    assert created.status_code == 201, created.text
    graph_id = created.json()["graph_id"]
    await assert_eventually(
        lambda: api.get(f"/graphs/{graph_id}"),
        lambda r: r.json()["status"] == GraphStatus.COMPLETED,
        within=60,
        what="the graph completed",
    )
    question = "Who settled the Zanzibar refunds?"
    [match] = await indexed(api, question, 1)
    assert match["answer"] == output and match["owner_id"].startswith(f"graph:{graph_id}:task:")

    await converse(api, "recall", question)
    [recalled] = context_of(fake)
    assert recalled.startswith("Relevant past experience (finished turns, best match first):\n1. ")
    assert f"   Q: task 'settle': {json.dumps({'echo': output})}\n   A: {output}" in recalled
    assert recalled.count("\n1. ") == 1 and "\n2. " not in recalled, "one record matched, one is shown"


async def upload_handbook(http: httpx.AsyncClient) -> None:
    uploaded = await http.post(
        "/artifacts",
        content=HANDBOOK,
        params={"name": "handbook.txt"},
        headers={"content-type": "text/plain"},
    )
    assert uploaded.status_code == 201, uploaded.text
    assert uploaded.json()["artifact_id"] == HANDBOOK_ID


async def test_artifact_config_full_gives_the_model_the_whole_artifact(
    api: httpx.AsyncClient, fake: FakeChatCompletions
) -> None:
    await upload_handbook(api)
    await converse(api, "full", "Which refunds need a second look?")
    [shown] = context_of(fake)
    lines = HANDBOOK.decode().count("\n") + 1
    assert (
        shown
        == f"[artifact {HANDBOOK_ID}, text/plain, {len(HANDBOOK):,} bytes, {lines:,} lines]\n{HANDBOOK.decode()}"
    )


async def test_artifact_config_summary_gives_the_model_its_head_and_tail(
    api: httpx.AsyncClient, fake: FakeChatCompletions
) -> None:
    await upload_handbook(api)
    await converse(api, "summary", "Which refunds need a second look?")
    [shown] = context_of(fake)
    text = HANDBOOK.decode()
    assert shown.startswith(
        f"[artifact {HANDBOOK_ID}, text/plain, {len(HANDBOOK):,} bytes, {text.count(chr(10)) + 1:,} lines; "
        "showing the first 2,000 and last 2,000 characters]\n"
        f"{text[:2000]}\n… "
    )
    assert shown.endswith(f" bytes omitted …\n{text[-2000:]}")
    assert MARKER not in shown, "the middle is left out"


@pytest.mark.parametrize("agent", ["reader", "reader-adk"])
async def test_an_upload_attached_to_a_message_is_shown_to_the_model_before_it(
    api: httpx.AsyncClient, fake: FakeChatCompletions, agent: str
) -> None:
    log = b"2026-11-22 10:02 ERROR refund 8812 failed: card expired\n"
    uploaded = await api.post(
        "/artifacts", content=log, params={"name": "refunds.log"}, headers={"content-type": "text/plain"}
    )
    assert uploaded.status_code == 201, uploaded.text
    artifact_id = uploaded.json()["artifact_id"]
    question = "Why did refund 8812 fail?"
    await converse(api, agent, question, artifacts=[artifact_id])
    summary = f"[artifact {artifact_id}, text/plain, {len(log)} bytes, 2 lines]\n{log.decode()}"
    sent = sent_to_model(fake)
    if agent == "reader":
        assert sent == [("system", "You help with refunds."), ("system", summary), ("user", question)]
    else:  # ADK hands system text to the model as a user part marked [system]
        assert sent[1:] == [("user", f"[system] {summary}"), ("user", question)]
