"""A loopback stand-in for an OpenAI-compatible chat-completions API, for tests.

Shaped after OpenAI's public API reference: `POST /v1/chat/completions` takes a JSON body
(`model`, `messages`, `tools`, `tool_choice`, `stream`, ...) and answers a `chat.completion`
object, or `chat.completion.chunk` server-sent events ending in `data: [DONE]` when `stream` is
true; errors are `{"error": {"message", "type", "param", "code"}}` with an HTTP status; and
`GET /v1/models` lists models. Real SDKs (`openai`, `langchain-openai`, ADK adapters) are pointed
at it through `base_url`, so no test ever reaches a real provider.

    async with fake_chat_completions() as fake:
        fake.enqueue(fake.tool_calls([("call_1", "sql", '{"sql": "SELECT 1"}')]), fake.text("ok"))
        client = AsyncOpenAI(base_url=fake.base_url, api_key="sk-test")
        ...
        assert fake.requests[0]["model"] == "gpt-test"

Scripted replies are used in order; when none is left, a default responder follows the demo
rules: after a tool message → `Done: <tool content>`; a latest user message that is SQL → a
`sql` tool call; anything else → `You said: <text>`.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from activities.tools.sql.syntax import is_sql_statement

from ..support import running

_CREATED = 1_700_000_000  # a fixed timestamp: replies are deterministic


@dataclass(frozen=True)
class Reply:
    """One scripted answer: an assistant message (status 200) or an error body.

    Attributes:
        status: HTTP status; 200 for a completion.
        message: The assistant message (`role`, `content`, `tool_calls`) of a completion.
        error: The `error` object of an error reply.
        finish_reason: `stop`, `tool_calls`, `length`, ...
        delay: Seconds to wait before answering (for client timeouts).
    """

    status: int = 200
    message: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    finish_reason: str = "stop"
    delay: float = 0.0


def text(content: str, *, delay: float = 0.0) -> Reply:
    """A completion whose assistant message is `content`."""
    return Reply(message={"role": "assistant", "content": content}, delay=delay)


def tool_calls(calls: list[tuple[str, str, str]], *, content: str | None = None, delay: float = 0.0) -> Reply:
    """A completion proposing tool calls: `(call_id, function name, arguments as a JSON string)`.

    The arguments string is sent as given, so tests can script malformed JSON.
    """
    message = {
        "role": "assistant",
        "content": content,
        "tool_calls": [
            {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}
            for call_id, name, arguments in calls
        ],
    }
    return Reply(message=message, finish_reason="tool_calls", delay=delay)


def error(status: int, message: str, code: str | None = None, type: str | None = None) -> Reply:
    """An error reply, e.g. `error(401, "Incorrect API key provided", "invalid_api_key")`.

    `type` defaults to what OpenAI uses for the status: `invalid_request_error` (4xx),
    `insufficient_quota` for that 429 code, `server_error` (5xx).
    """
    if type is None:
        type = "server_error" if status >= 500 else "invalid_request_error"
        if code == "insufficient_quota":
            type = "insufficient_quota"
    return Reply(status=status, error={"message": message, "type": type, "param": None, "code": code})


def _text_of(content: Any) -> str:
    """Message content as text: a string, or the text parts of a content-part list."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return "" if content is None else json.dumps(content)


def demo_reply(body: dict[str, Any], call_ids: itertools.count[int]) -> Reply:
    """The default answer when no reply is scripted: the demo rules over the messages."""
    messages = body.get("messages") or []
    if messages and messages[-1].get("role") == "tool":
        return text(f"Done: {_text_of(messages[-1].get('content'))}")
    user = next((m for m in reversed(messages) if m.get("role") == "user"), None)
    said = _text_of(user.get("content")).strip() if user else ""
    if said and is_sql_statement(said):
        return tool_calls([(f"call_{next(call_ids)}", "sql", json.dumps({"sql": said}))])
    return text(f"You said: {said}")


@dataclass
class FakeChatCompletions:
    """The running stand-in: where it listens, what it received, what it will answer.

    Attributes:
        base_url: `http://127.0.0.1:PORT/v1`, for an SDK's `base_url`.
        requests: Every chat-completions body received, oldest first, each with an extra
            `authorization` key holding the request's Authorization header (or None).
        models: Ids listed by `GET /v1/models`.
    """

    base_url: str = ""
    requests: list[dict[str, Any]] = field(default_factory=list)
    models: list[str] = field(default_factory=lambda: ["fake-model"])
    _queue: deque[Reply] = field(default_factory=deque)
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    text = staticmethod(text)
    tool_calls = staticmethod(tool_calls)
    error = staticmethod(error)

    def enqueue(self, *replies: Reply) -> None:
        """Script the next replies, answered in order before the default responder."""
        self._queue.extend(replies)

    @property
    def pending(self) -> int:
        """Scripted replies not yet used."""
        return len(self._queue)

    async def _completions(self, request: Request) -> Response:
        body = await request.json()
        self.requests.append({**body, "authorization": request.headers.get("authorization")})
        reply = self._queue.popleft() if self._queue else demo_reply(body, self._ids)
        if reply.delay:
            await asyncio.sleep(reply.delay)
        if reply.error is not None:
            return JSONResponse({"error": reply.error}, status_code=reply.status)
        number = len(self.requests)
        model = body.get("model", "fake-model")
        message = reply.message or {"role": "assistant", "content": ""}
        usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
        if body.get("stream"):
            include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
            events = _stream_events(
                f"chatcmpl-{number}", model, message, reply.finish_reason, usage, include_usage
            )
            return StreamingResponse(events, media_type="text/event-stream")
        completion = {
            "id": f"chatcmpl-{number}",
            "object": "chat.completion",
            "created": _CREATED,
            "model": model,
            "choices": [
                {"index": 0, "message": message, "finish_reason": reply.finish_reason, "logprobs": None}
            ],
            "usage": usage,
        }
        return JSONResponse(completion, status_code=reply.status)

    async def _models(self, request: Request) -> Response:
        data = [{"id": m, "object": "model", "created": _CREATED, "owned_by": "fake"} for m in self.models]
        return JSONResponse({"object": "list", "data": data})


async def _stream_events(
    id_: str, model: str, message: dict[str, Any], finish: str, usage: dict[str, int], include_usage: bool
) -> AsyncIterator[str]:
    """The completion as `chat.completion.chunk` events: the whole delta, then the finish."""

    def chunk(delta: dict[str, Any], finish_reason: str | None, **extra: Any) -> str:
        choices = [{"index": 0, "delta": delta, "finish_reason": finish_reason, "logprobs": None}]
        payload = {"id": id_, "object": "chat.completion.chunk", "created": _CREATED, "model": model}
        return "data: " + json.dumps({**payload, "choices": choices, **extra}) + "\n\n"

    delta: dict[str, Any] = {"role": "assistant", "content": message.get("content")}
    if message.get("tool_calls"):
        delta["tool_calls"] = [{"index": i, **call} for i, call in enumerate(message["tool_calls"])]
    yield chunk(delta, None)
    yield chunk({}, finish)
    if include_usage:
        payload = {"id": id_, "object": "chat.completion.chunk", "created": _CREATED, "model": model}
        yield "data: " + json.dumps({**payload, "choices": [], "usage": usage}) + "\n\n"
    yield "data: [DONE]\n\n"


@asynccontextmanager
async def fake_chat_completions() -> AsyncIterator[FakeChatCompletions]:
    """Serve a `FakeChatCompletions` on a free loopback port for the duration of the block."""
    fake = FakeChatCompletions()
    app = Starlette(
        routes=[
            Route("/v1/chat/completions", fake._completions, methods=["POST"]),
            Route("/v1/models", fake._models, methods=["GET"]),
        ]
    )
    async with running(app) as base_url:
        fake.base_url = f"{base_url}/v1"
        yield fake
