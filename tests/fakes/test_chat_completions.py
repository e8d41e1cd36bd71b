"""The loopback chat-completions stand-in, driven by the real `openai` client."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import openai
import pytest
from openai import AsyncOpenAI

from tests.fakes.chat_completions import FakeChatCompletions, fake_chat_completions


@pytest.fixture
async def fake() -> AsyncIterator[FakeChatCompletions]:
    async with fake_chat_completions() as server:
        yield server


def client(fake: FakeChatCompletions) -> AsyncOpenAI:
    return AsyncOpenAI(base_url=fake.base_url, api_key="sk-test-key", max_retries=0, timeout=5)


async def test_scripted_tool_calls_then_text(fake: FakeChatCompletions) -> None:
    fake.enqueue(
        fake.tool_calls(
            [("call_a", "sql", '{"sql": "SELECT 1"}'), ("call_b", "terminal", '{"command": "ls"}')]
        ),
        fake.text("all done"),
    )
    tools = [{"type": "function", "function": {"name": "sql", "parameters": {"type": "object"}}}]
    async with client(fake) as llm:
        first = await llm.chat.completions.create(
            model="m1",
            messages=[{"role": "user", "content": "hi"}],
            tools=tools,
        )
        second = await llm.chat.completions.create(model="m2", messages=[{"role": "user", "content": "hi"}])

    calls = first.choices[0].message.tool_calls or []
    assert [(c.id, c.function.name, c.function.arguments) for c in calls] == [
        ("call_a", "sql", '{"sql": "SELECT 1"}'),
        ("call_b", "terminal", '{"command": "ls"}'),
    ]
    assert first.choices[0].finish_reason == "tool_calls" and first.model == "m1"
    assert second.choices[0].message.content == "all done"
    assert [r["model"] for r in fake.requests] == ["m1", "m2"]
    assert fake.requests[0]["tools"] == tools and "tools" not in fake.requests[1]
    assert fake.requests[0]["authorization"] == "Bearer sk-test-key"
    assert fake.pending == 0


@pytest.mark.parametrize(
    ("reply_args", "exception", "code"),
    [
        (
            (401, "Incorrect API key provided", "invalid_api_key"),
            openai.AuthenticationError,
            "invalid_api_key",
        ),
        ((429, "Rate limit reached", "rate_limit_exceeded"), openai.RateLimitError, "rate_limit_exceeded"),
        (
            (429, "You exceeded your current quota", "insufficient_quota"),
            openai.RateLimitError,
            "insufficient_quota",
        ),
        ((500, "The server had an error"), openai.InternalServerError, None),
    ],
)
async def test_errors_become_the_sdk_exceptions(
    fake: FakeChatCompletions,
    reply_args: tuple[int, str],
    exception: type[openai.APIStatusError],
    code: str | None,
) -> None:
    fake.enqueue(fake.error(*reply_args))

    with pytest.raises(exception) as caught:
        async with client(fake) as llm:
            await llm.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])

    assert caught.value.status_code == reply_args[0]
    assert caught.value.code == code
    assert reply_args[1] in caught.value.message


async def test_default_responder_follows_the_demo_rules(fake: FakeChatCompletions) -> None:
    async with client(fake) as llm:
        sql = await llm.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "SELECT * FROM orders"}]
        )
        chat = await llm.chat.completions.create(model="m", messages=[{"role": "user", "content": "hello"}])
        done = await llm.chat.completions.create(
            model="m",
            messages=[
                {"role": "user", "content": "SELECT 1"},
                {"role": "tool", "tool_call_id": "call_1", "content": "1 row"},
            ],
        )

    [call] = sql.choices[0].message.tool_calls or []
    assert call.function.name == "sql"
    assert json.loads(call.function.arguments) == {"sql": "SELECT * FROM orders"}
    assert chat.choices[0].message.content == "You said: hello"
    assert done.choices[0].message.content == "Done: 1 row"


async def test_streaming_and_models(fake: FakeChatCompletions) -> None:
    fake.enqueue(fake.tool_calls([("call_s", "sql", '{"sql": "SELECT 1"}')]))
    async with client(fake) as llm:
        stream = await llm.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "hi"}], stream=True
        )
        chunks = [chunk async for chunk in stream]
        models = await llm.models.list()

    deltas = [c.choices[0].delta for c in chunks if c.choices]
    assert deltas[0].tool_calls and deltas[0].tool_calls[0].id == "call_s"
    assert chunks[-1].choices[0].finish_reason == "tool_calls"
    assert [m.id for m in models.data] == ["fake-model"]
