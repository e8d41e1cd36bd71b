"""Declared google-adk and LangGraph agents on an OpenAI-compatible endpoint, end to end over HTTP.

The endpoint is the loopback stand-in (tests/fakes): the real `openai` client inside ADK's and
LangGraph's machinery talks to it over HTTP. Tool calls the model proposes are gated by the
workflow exactly as the demo agent's are.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import httpx
import pytest
from temporalio.client import Client

from contracts import TaskChunkType, TaskStreamChunk, TurnAnswered, TurnFailed
from core.settings import Settings

from ..fakes.chat_completions import FakeChatCompletions, fake_chat_completions
from ..support import asked, asked_content, collect_events, event_of, events, serve_agents
from .test_sessions import DELETE_CANCELLED, is_type, new_key

KEY = "sk-test-not-a-real-key"


@pytest.fixture
async def fake() -> AsyncIterator[FakeChatCompletions]:
    async with fake_chat_completions() as server:
        yield server


@pytest.fixture
async def remote_http(
    client: Client,
    settings: Settings,
    fake: FakeChatCompletions,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> AsyncIterator[httpx.AsyncClient]:
    """API and worker with two declared agents pointed at the stand-in endpoint."""
    monkeypatch.setenv("REMOTE_MODEL_KEY", KEY)
    declared = "\n".join(
        f'[agents.remote-{framework}]\nframework = "{framework}"\nmodel = "fake-model"\n'
        f'base_url = "{fake.base_url}"\napi_key_env = "REMOTE_MODEL_KEY"\n'
        f'instruction = "You run SQL for the user."\ntools = ["sql"]\n'
        for framework in ("adk", "langgraph", "autogen")
    )
    async with serve_agents(client, settings, declared, tmp_path) as http:
        yield http


@pytest.mark.parametrize("framework", ["adk", "langgraph", "autogen"])
async def test_a_declared_agent_completes_a_conversation_with_an_approved_tool_call(
    remote_http: httpx.AsyncClient,
    fake: FakeChatCompletions,
    count_orders: Callable[[str], int],
    framework: str,
) -> None:
    http, key = remote_http, new_key()
    created = await http.post("/sessions", json={"session_key": key, "agent_id": f"Agent:remote-{framework}"})
    assert created.status_code == 201, created.text
    await http.post(f"/sessions/{key}/messages", json={"content": DELETE_CANCELLED, "principal": "alice"})
    request = (await collect_events(http, key, is_type(TaskChunkType.TOOL_APPROVAL_REQUEST)))[-1]
    assert asked_content(request)["tool_params"] == {"sql": DELETE_CANCELLED}
    assert count_orders("status = 'cancelled'") == 3

    first = fake.requests[0]
    assert first["model"] == "fake-model"
    assert first["authorization"] == f"Bearer {KEY}"
    assert [tool["function"]["name"] for tool in first["tools"]] == ["sql", "ask_user"], (
        "the tools are declared, ask_user to every agent"
    )
    call_id = "call_1"

    decided = await http.post(
        f"/sessions/{key}/interactions/{asked(request).interaction_id}", json={"approved": True}
    )
    assert decided.status_code == 200, decided.text
    assert decided.json()["tool_result"]["content"]["rowcount"] == 3
    chunks = await collect_events(
        http, key, is_type(TaskChunkType.COMPLETE), params={"after": request.sequence_id}
    )
    [answer] = [c for c in chunks if c.chunk_type == TaskChunkType.RESPONSE]
    assert count_orders("status = 'cancelled'") == 0

    follow_up = fake.requests[-1]["messages"]
    tool_messages = [m for m in follow_up if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in tool_messages] == [call_id], (
        "the result goes back under the model's call id"
    )
    assert json.loads(tool_messages[0]["content"])["content"]["rowcount"] == 3
    assert event_of(answer, TurnAnswered).answer == f"Done: {tool_messages[0]['content']}", (
        "the model's answer, as it gave it"
    )
    assert len(fake.requests) == 2, "the adapter never runs the tool itself: one model call per step"


@pytest.mark.parametrize("framework", ["adk", "langgraph", "autogen"])
async def test_a_rejected_key_surfaces_as_authentication_failed_without_the_key(
    remote_http: httpx.AsyncClient, fake: FakeChatCompletions, framework: str
) -> None:
    http, key = remote_http, new_key()
    fake.enqueue(fake.error(401, f"Incorrect API key provided: {KEY}", code="invalid_api_key"))
    await http.post("/sessions", json={"session_key": key, "agent_id": f"Agent:remote-{framework}"})
    await http.post(f"/sessions/{key}/messages", json={"content": "How many orders are there?"})
    chunks = await collect_events(http, key, is_type(TaskChunkType.COMPLETE))
    [error] = events(chunks, TurnFailed)
    assert error.failure is not None and error.failure.type == "AUTHENTICATION_FAILED"
    assert KEY not in error.model_dump_json()
    assert len(fake.requests) == 1, "an authentication error is not retried"


@pytest.mark.parametrize("framework", ["adk", "langgraph", "autogen"])
async def test_several_calls_in_one_turn_are_each_gated_and_answered_together(
    remote_http: httpx.AsyncClient,
    fake: FakeChatCompletions,
    count_orders: Callable[[str], int],
    framework: str,
) -> None:
    http, key = remote_http, new_key()
    fake.enqueue(
        fake.tool_calls(
            [
                ("call_a", "sql", json.dumps({"sql": "DELETE FROM orders WHERE id = 2"})),
                ("call_b", "sql", json.dumps({"sql": "SELECT customer FROM orders WHERE id = 3"})),
                ("call_c", "sql", json.dumps({"sql": "DELETE FROM orders WHERE id = 4"})),
            ]
        )
    )
    await http.post("/sessions", json={"session_key": key, "agent_id": f"Agent:remote-{framework}"})
    await http.post(
        f"/sessions/{key}/messages", json={"content": "clean up orders 2 and 4", "principal": "alice"}
    )

    first = (await collect_events(http, key, is_type(TaskChunkType.TOOL_APPROVAL_REQUEST)))[-1]
    assert asked_content(first)["tool_params"] == {"sql": "DELETE FROM orders WHERE id = 2"}
    denied = await http.post(
        f"/sessions/{key}/interactions/{asked(first).interaction_id}",
        json={"approved": False, "user_message": "keep order 2"},
    )
    assert denied.status_code == 200
    second = (
        await collect_events(
            http, key, is_type(TaskChunkType.TOOL_APPROVAL_REQUEST), params={"after": first.sequence_id}
        )
    )[-1]
    assert asked_content(second)["tool_params"] == {"sql": "DELETE FROM orders WHERE id = 4"}
    approved = await http.post(
        f"/sessions/{key}/interactions/{asked(second).interaction_id}", json={"approved": True}
    )
    assert approved.status_code == 200
    await collect_events(http, key, is_type(TaskChunkType.COMPLETE), params={"after": second.sequence_id})

    assert count_orders("id = 2") == 1 and count_orders("id = 4") == 0
    assert len(fake.requests) == 2, "all three results go back in one model request"
    results = {m["tool_call_id"]: m["content"] for m in fake.requests[1]["messages"] if m["role"] == "tool"}
    assert list(results) == ["call_a", "call_b", "call_c"]
    assert "keep order 2" in results["call_a"] and "denied" in results["call_a"]
    assert "Carol" in results["call_b"], "the read-only call ran without approval"
    assert '"rowcount": 1' in results["call_c"]


def answered(text: str) -> Callable[[TaskStreamChunk], bool]:
    return lambda chunk: isinstance(chunk.content, TurnAnswered) and text in str(chunk.content.answer)


async def test_the_model_sees_only_the_configured_context(
    client: Client,
    settings: Settings,
    fake: FakeChatCompletions,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("REMOTE_MODEL_KEY", KEY)
    brief = (
        f'[agents.brief]\nframework = "langgraph"\nmodel = "fake-model"\nbase_url = "{fake.base_url}"\n'
        'api_key_env = "REMOTE_MODEL_KEY"\n[agents.brief.context]\nconversation_history_config = { last_n = 1 }\n'
        "include_tool_list = false\n"
    )
    async with serve_agents(client, settings, brief, tmp_path) as http:
        key = new_key()
        await http.post("/sessions", json={"session_key": key, "agent_id": "Agent:brief"})
        for text in ("first question", "second question"):
            await http.post(f"/sessions/{key}/messages", json={"content": text})
            await collect_events(http, key, answered(text))
    last = fake.requests[-1]
    assert [m["content"] for m in last["messages"] if m["role"] == "user"] == ["second question"]
    assert "tools" not in last or not last["tools"], "include_tool_list = false declares no tools"


async def test_a_rate_limited_model_is_retried_by_temporal(
    remote_http: httpx.AsyncClient, fake: FakeChatCompletions
) -> None:
    http, key = remote_http, new_key()
    fake.enqueue(fake.error(429, "Rate limit reached for requests", code="rate_limit_exceeded"))
    await http.post("/sessions", json={"session_key": key, "agent_id": "Agent:remote-langgraph"})
    await http.post(f"/sessions/{key}/messages", json={"content": "hello there"})
    chunks = await collect_events(http, key, is_type(TaskChunkType.COMPLETE))
    answer = next(c for c in chunks if c.chunk_type == TaskChunkType.RESPONSE)
    assert event_of(answer, TurnAnswered).answer == "You said: hello there"
    assert len(fake.requests) == 2, "the 429 was retried once, then answered"


CAREFUL = 'framework = "demo"\nmodel = "demo"\ntools = ["sql"]\ninstruction = "{}"\n'


async def test_a_session_refers_to_its_agent_and_a_declaration_changed_since_fails_its_turn_clearly(
    client: Client, settings: Settings, tmp_path: Path
) -> None:
    key, before, after = new_key(), tmp_path / "before", tmp_path / "after"
    before.mkdir()
    after.mkdir()
    declared = "[agents.careful]\n" + CAREFUL.format("Check every statement twice.")
    async with serve_agents(client, settings, declared, before) as http:
        await http.post("/sessions", json={"session_key": key, "agent_id": "Agent:careful"})
        await http.post(f"/sessions/{key}/messages", json={"content": "hello"})
        chunks = await collect_events(http, key, is_type(TaskChunkType.COMPLETE))
        assert events(chunks, TurnAnswered), "the worker ran the declaration the session refers to"
    history = await client.get_workflow_handle(f"session:{key}").fetch_history()
    started = history.events[0].workflow_execution_started_event_attributes.input.payloads[0].data
    assert b'"careful"' in started and b"Check every statement" not in started, (
        "the session carries its agent by reference, not its instruction"
    )

    changed = "[agents.careful]\n" + CAREFUL.format("Never check anything.")
    async with serve_agents(client, settings, changed, after) as http:
        await http.post(f"/sessions/{key}/messages", json={"content": "hello again"})
        chunks = await collect_events(http, key, lambda chunk: isinstance(chunk.content, TurnFailed))
    [failed] = events(chunks, TurnFailed)
    assert failed.failure is not None
    assert "'careful' (Agent:careful) was declared otherwise" in failed.failure.message
    assert "start a new session" in failed.failure.message, "it says what to do"
