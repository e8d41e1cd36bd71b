"""A loopback stand-in for the Lark/Feishu Open API (the parts the Lark channel uses), for tests.

Shaped after the public server API docs; the real `lark.Client`, built with
`.domain(fake.base_url)`, talks to it over HTTP:

- `POST /open-apis/auth/v3/tenant_access_token/internal` `{app_id, app_secret}` →
  `{"code": 0, "msg": "ok", "tenant_access_token": "t-…", "expire": 7200}`; a wrong pair →
  code 10014 "app secret invalid".
- `POST /open-apis/im/v1/messages?receive_id_type=chat_id` `{receive_id, msg_type, content, uuid?}`
  (send), `POST /open-apis/im/v1/messages/{message_id}/reply` `{msg_type, content, uuid?}`
  (reply) → `{"code": 0, "msg": "success", "data": {"message_id": "om_…", "chat_id", …}}`; a
  repeated `uuid` answers the first message again, as Lark does (one message per uuid an hour).
- `PATCH /open-apis/im/v1/messages/{message_id}` `{content}`: update a sent interactive card.

The im endpoints need `Authorization: Bearer <a token this fake issued>` (code 99991661 when it
is missing, 99991663 when it is unknown or revoked). `content` must be a JSON string: a text
needs a non-empty `text`, a card `elements` or `body.elements`; texts over 150 KB and cards over
30 KB are refused with code 230025. Unknown message ids get 230001 (invalid request parameter).

    async with lark_open_api() as fake:
        fake.fail_next(429, RATE_LIMITED, "request trigger frequency limit")
        client = lark.Client.builder().app_id(fake.app_id).app_secret(fake.app_secret)
            .domain(fake.base_url).build()
        ...
        assert fake.sent()[0].content == {"text": "hello"}

Each fake has its own app id (`cli_<random>`): the SDK caches tenant tokens per app id for the
whole process, so a token of an earlier fake is never reused against this one.
"""

from __future__ import annotations

import asyncio
import importlib
import itertools
import json
import secrets
from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ..support import running

# Codes from Lark's generic and im error code tables.
APP_SECRET_INVALID = 10014  # tenant_access_token/internal: wrong app_id/app_secret pair
RATE_LIMITED = 99991400  # request trigger frequency limit (HTTP 429 at the gateway)
CHAT_RATE_LIMITED = 230020  # im: this chat's message rate limit
MISSING_ACCESS_TOKEN = 99991661
INVALID_ACCESS_TOKEN = 99991663
SCOPE_NOT_ENABLED = 99991672  # the app has not enabled the API's scope
INVALID_PARAMETER = 230001  # im: invalid request parameter (content, message id, ...)
BOT_NOT_IN_CHAT = 230002
CONTENT_TOO_LONG = 230025
FIELD_VALIDATION_FAILED = 99992402

TOKEN_PATH = "/open-apis/auth/v3/tenant_access_token/internal"
_TEXT_LIMIT = 150 * 1024
_CARD_LIMIT = 30 * 1024
_RECEIVE_ID_TYPES = {"chat_id", "open_id", "user_id", "union_id", "email"}
_TIME = 1_700_000_000_000  # milliseconds; replies are deterministic apart from ids


@dataclass(frozen=True)
class RecordedRequest:
    """One HTTP request the fake received."""

    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: Any

    @property
    def authorization(self) -> str | None:
        """The Authorization header, or None."""
        return self.headers.get("authorization")


@dataclass
class FakeMessage:
    """A message in the fake's store: sent or replied by the app, or written by a user.

    Attributes:
        content: The decoded `content` JSON (for a card: its latest version).
        reply_to: The message this one replies to.
        sender: `app`, or the open_id of the user who wrote it.
    """

    message_id: str
    chat_id: str
    msg_type: str
    content: dict[str, Any]
    reply_to: str | None = None
    uuid: str | None = None
    sender: str = "app"


@dataclass(frozen=True)
class CardUpdate:
    """One `PATCH` of a card: the message and its new (decoded) card JSON."""

    message_id: str
    content: dict[str, Any]


@dataclass
class _Failure:
    status: int
    code: int | None
    msg: str
    path_prefix: str
    headers: dict[str, str]
    after: int


class LarkApiError(Exception):
    """A refusal, answered as `{"code", "msg", "error": {...}}` with an HTTP status."""

    def __init__(self, status: int, code: int, msg: str) -> None:
        super().__init__(msg)
        self.status, self.code, self.msg = status, code, msg


@dataclass
class FakeLarkOpenApi:
    """The running stand-in: credentials it accepts, what it received, what it stores.

    Attributes:
        base_url: `http://127.0.0.1:PORT`, for `lark.Client.builder().domain(...)`.
        app_id: The app id the token endpoint accepts (unique per fake).
        app_secret: The app secret it accepts.
        requests: Every request received (token requests included), oldest first.
        messages: Messages by id, in creation order.
    """

    app_id: str = field(default_factory=lambda: f"cli_{secrets.token_hex(8)}")
    app_secret: str = "fake-app-secret-0123456789abcdef"
    base_url: str = ""
    requests: list[RecordedRequest] = field(default_factory=list)
    messages: dict[str, FakeMessage] = field(default_factory=dict)
    updates: list[CardUpdate] = field(default_factory=list)
    _tokens: set[str] = field(default_factory=set)
    _failures: deque[_Failure] = field(default_factory=deque)
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    def fail_next(
        self,
        status: int,
        code: int | None = None,
        msg: str = "",
        *,
        path_prefix: str = "/open-apis/im/",
        headers: dict[str, str] | None = None,
        after: int = 0,
    ) -> None:
        """Script a failure for the next request whose path starts with `path_prefix`.

        Failures are used in order; `after=n` lets n matching requests through first. `code=None`
        answers a non-JSON body (a gateway error page).
        Examples: `fail_next(429, RATE_LIMITED, "request trigger frequency limit")`,
        `fail_next(500, 1000004, "internal error")`, `fail_next(502)`,
        `fail_next(400, SCOPE_NOT_ENABLED, "Access denied. ...")`,
        `fail_next(400, APP_SECRET_INVALID, "app secret invalid", path_prefix=TOKEN_PATH)`.
        """
        self._failures.append(_Failure(status, code, msg, path_prefix, headers or {}, after))

    @property
    def pending_failures(self) -> int:
        """Scripted failures not yet used."""
        return len(self._failures)

    def revoke_tokens(self) -> None:
        """Invalidate every tenant token issued so far (as if they expired or were revoked)."""
        self._tokens.clear()

    @property
    def tokens(self) -> set[str]:
        """Tenant access tokens currently valid."""
        return set(self._tokens)

    def user_message(self, chat_id: str, text: str, open_id: str = "ou_fake_user") -> str:
        """Store a message a user wrote in `chat_id` (so the app can reply to it); return its id."""
        message_id = self._new_id()
        self.messages[message_id] = FakeMessage(message_id, chat_id, "text", {"text": text}, sender=open_id)
        return message_id

    def sent(self) -> list[FakeMessage]:
        """Messages the app sent or replied with, oldest first (a repeated uuid counts once)."""
        return [message for message in self.messages.values() if message.sender == "app"]

    def card_updates(self) -> list[CardUpdate]:
        """Card updates (`PATCH`), oldest first."""
        return list(self.updates)

    def api_requests(self) -> list[RecordedRequest]:
        """Requests to the im endpoints (token requests left out)."""
        return [r for r in self.requests if r.path != TOKEN_PATH]

    def _new_id(self) -> str:
        return f"om_{next(self._ids):04d}{secrets.token_hex(6)}"

    # ------------------------------------------------------------------ HTTP

    async def _record(self, request: Request) -> RecordedRequest:
        raw = await request.body()
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode(errors="replace")
        recorded = RecordedRequest(
            method=request.method,
            path=request.url.path,
            query=dict(request.query_params),
            headers={k.lower(): v for k, v in request.headers.items()},
            body=body,
        )
        self.requests.append(recorded)
        return recorded

    def _scripted(self, path: str) -> Response | None:
        failure = next((f for f in self._failures if path.startswith(f.path_prefix)), None)
        if failure is None:
            return None
        if failure.after > 0:
            failure.after -= 1
            return None
        self._failures.remove(failure)
        if failure.code is None:
            return Response("<html>upstream error</html>", failure.status, failure.headers, "text/html")
        return _error(LarkApiError(failure.status, failure.code, failure.msg), failure.headers)

    async def _token(self, request: Request) -> Response:
        recorded = await self._record(request)
        if (scripted := self._scripted(recorded.path)) is not None:
            return scripted
        body = recorded.body if isinstance(recorded.body, dict) else {}
        if body.get("app_id") != self.app_id or body.get("app_secret") != self.app_secret:
            return _error(LarkApiError(400, APP_SECRET_INVALID, "app secret invalid"))
        token = f"t-{secrets.token_hex(16)}"
        self._tokens.add(token)
        return JSONResponse({"code": 0, "msg": "ok", "tenant_access_token": token, "expire": 7200})

    async def _im(self, request: Request) -> Response:
        recorded = await self._record(request)
        if (scripted := self._scripted(recorded.path)) is not None:
            return scripted
        try:
            self._authorize(recorded)
            body = recorded.body if isinstance(recorded.body, dict) else {}
            message_id = request.path_params.get("message_id")
            if recorded.method == "PATCH":
                self._patch(str(message_id), body)
                return _ok({})
            if message_id is not None:
                parent = self._message(message_id)
                return _ok(self._store(parent.chat_id, body, reply_to=message_id))
            if recorded.query.get("receive_id_type") not in _RECEIVE_ID_TYPES:
                raise LarkApiError(400, FIELD_VALIDATION_FAILED, "field validation failed: receive_id_type")
            if not body.get("receive_id"):
                raise LarkApiError(400, FIELD_VALIDATION_FAILED, "field validation failed: receive_id")
            return _ok(self._store(str(body["receive_id"]), body, reply_to=None))
        except LarkApiError as err:
            return _error(err)

    def _authorize(self, recorded: RecordedRequest) -> None:
        header = recorded.authorization or ""
        if not header.startswith("Bearer ") or not header.removeprefix("Bearer ").strip():
            raise LarkApiError(400, MISSING_ACCESS_TOKEN, "Missing access token for authorization.")
        if header.removeprefix("Bearer ").strip() not in self._tokens:
            raise LarkApiError(400, INVALID_ACCESS_TOKEN, "Invalid access token for authorization.")

    def _message(self, message_id: str) -> FakeMessage:
        message = self.messages.get(message_id)
        if message is None:
            raise LarkApiError(400, INVALID_PARAMETER, f"invalid message_id: {message_id}")
        return message

    def _store(self, chat_id: str, body: dict[str, Any], reply_to: str | None) -> dict[str, Any]:
        key = body.get("uuid")
        earlier = next((m for m in self.messages.values() if key and m.uuid == key), None)
        if earlier is not None:
            return _data(earlier)
        msg_type = str(body.get("msg_type") or "")
        content = _content(msg_type, body.get("content"))
        message = FakeMessage(self._new_id(), chat_id, msg_type, content, reply_to=reply_to, uuid=key)
        self.messages[message.message_id] = message
        return _data(message)

    def _patch(self, message_id: str, body: dict[str, Any]) -> None:
        message = self._message(message_id)
        if message.msg_type != "interactive" or message.sender != "app":
            raise LarkApiError(
                400, INVALID_PARAMETER, "only interactive cards sent by the app can be updated"
            )
        message.content = _content("interactive", body.get("content"))
        self.updates.append(CardUpdate(message_id, message.content))


def _content(msg_type: str, raw: Any) -> dict[str, Any]:
    """Decode and check a message's `content` JSON string, as Lark does."""
    if not isinstance(raw, str):
        raise LarkApiError(400, INVALID_PARAMETER, "invalid message content: content must be a JSON string")
    try:
        content = json.loads(raw)
    except ValueError:
        raise LarkApiError(400, INVALID_PARAMETER, "invalid message content: not JSON") from None
    if not isinstance(content, dict):
        raise LarkApiError(400, INVALID_PARAMETER, "invalid message content: not a JSON object")
    size = len(raw.encode())
    if msg_type == "text":
        if not isinstance(content.get("text"), str) or not content["text"].strip():
            raise LarkApiError(400, INVALID_PARAMETER, "invalid message content: text is empty")
        if size > _TEXT_LIMIT:
            raise LarkApiError(400, CONTENT_TOO_LONG, "message content is too long")
    elif msg_type == "interactive":
        elements = content.get("elements", (content.get("body") or {}).get("elements"))
        if not isinstance(elements, list):
            raise LarkApiError(400, INVALID_PARAMETER, "invalid card content: no elements")
        if size > _CARD_LIMIT:
            raise LarkApiError(400, CONTENT_TOO_LONG, "card content is too long")
    elif msg_type != "post":
        raise LarkApiError(400, INVALID_PARAMETER, f"unsupported msg_type: {msg_type!r}")
    return content


def _data(message: FakeMessage) -> dict[str, Any]:
    return {
        "message_id": message.message_id,
        "root_id": message.reply_to or "",
        "parent_id": message.reply_to or "",
        "msg_type": message.msg_type,
        "create_time": str(_TIME),
        "update_time": str(_TIME),
        "deleted": False,
        "updated": False,
        "chat_id": message.chat_id,
        "sender": {"id": "cli_fake", "id_type": "app_id", "sender_type": "app", "tenant_key": "fake_tenant"},
        "body": {"content": json.dumps(message.content, ensure_ascii=False)},
    }


def _ok(data: dict[str, Any]) -> Response:
    return JSONResponse({"code": 0, "msg": "success", "data": data}, headers={"X-Tt-Logid": _log_id()})


def _error(err: LarkApiError, headers: dict[str, str] | None = None) -> Response:
    log_id = _log_id()
    body = {"code": err.code, "msg": err.msg, "error": {"log_id": log_id}}
    return JSONResponse(body, status_code=err.status, headers={"X-Tt-Logid": log_id, **(headers or {})})


def _log_id() -> str:
    return f"2026{secrets.token_hex(10).upper()}"


@asynccontextmanager
async def lark_open_api(app_secret: str | None = None) -> AsyncIterator[FakeLarkOpenApi]:
    """Serve a `FakeLarkOpenApi` on a free loopback port for the duration of the block.

    The SDK is imported first, as `synapse worker` does when Lark is configured: importing it takes
    seconds (tens on a busy machine), which would otherwise count against the first card's wait."""
    await asyncio.to_thread(importlib.import_module, "lark_oapi")
    fake = FakeLarkOpenApi() if app_secret is None else FakeLarkOpenApi(app_secret=app_secret)
    app = Starlette(
        routes=[
            Route(TOKEN_PATH, fake._token, methods=["POST"]),
            Route("/open-apis/im/v1/messages", fake._im, methods=["POST"]),
            Route("/open-apis/im/v1/messages/{message_id}/reply", fake._im, methods=["POST"]),
            Route("/open-apis/im/v1/messages/{message_id}", fake._im, methods=["PATCH"]),
        ]
    )
    async with running(app) as base_url:
        fake.base_url = base_url
        yield fake
