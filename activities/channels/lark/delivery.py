"""Lark/Feishu, out: texts, approval cards and card updates to a chat (for `deliver_message`).

Every call goes through the official SDK (`lark-oapi`) and its typed im/v1 requests. The SDK is
imported on first use (importing it takes seconds) and its calls run in a worker thread: its
`a*` methods still fetch the tenant token with blocking I/O on the event loop.

Errors, as `ApplicationError` types the workflow's retry policy knows:
- `LarkUnavailable` (retryable): HTTP 429 or 5xx, a rate-limit code, no answer, a non-JSON answer;
  Temporal retries with backoff (honouring the gateway's reset header when there is one).
- `LarkAuthError` (non-retryable): the app's credentials or permissions were refused.
- `LarkRejected` (non-retryable): any other refusal (bad chat, content, message id).
- `LarkNotConfigured` / `InvalidOutboundMessage` (non-retryable): nothing could be sent.
Messages name the Lark code, its msg and the log id, never the app secret.

Sends carry a `uuid` derived from the delivery's key (the activity: workflow, run, activity id;
and the part), so a retried activity does not post a message twice: Lark keeps one message per
uuid for an hour.
"""

from __future__ import annotations

import importlib
import json
import threading
import uuid
from datetime import timedelta
from typing import Any

from temporalio.exceptions import ApplicationError

from contracts import Delivery, ErrorType, OutboundMessage
from contracts.names import SESSION_PREFIX
from core.settings import Settings

from ..delivery import invalid_outbound
from .cards import approval_card, decided_card, text_chunks, with_mentions

NOT_CONFIGURED = "Lark channel is not configured (set LARK_APP_ID, LARK_APP_SECRET)"
CLIENT_TIMEOUT_SECONDS = 10.0
"""One Open API request; the activity's start-to-close timeout covers a few of them."""

# Codes from Lark's generic and im error code tables.
RATE_LIMIT_CODES = frozenset({99991400, 230020, 11232})
"""99991400 request frequency limit (app), 230020 per-chat limit, 11232 message service limit."""
TOKEN_CODES = frozenset({99991661, 99991663, 99991671})
"""Tenant access token missing (99991661), invalid or expired (99991663), malformed (99991671)."""
AUTH_CODES = frozenset({10003, 10014, 99991543, 99991662, 99991672, 99991673, 99991676})
"""Invalid app id (10003) or secret (10014), bad credentials (99991543), app disabled (99991662)
or unavailable (99991673), API scope not enabled (99991672) or not granted (99991676)."""


def _error(kind: ErrorType, message: str, *, retry_after: float | None = None) -> ApplicationError:
    delay = timedelta(seconds=retry_after) if retry_after else None
    return ApplicationError(
        message, type=kind, non_retryable=kind != ErrorType.LARK_UNAVAILABLE, next_retry_delay=delay
    )


def _retry_after(headers: dict[str, str]) -> float | None:
    """Seconds the gateway asks to wait (`x-ogw-ratelimit-reset` or `Retry-After`), if any."""
    lowered = {key.lower(): value for key, value in (headers or {}).items()}
    for name in ("x-ogw-ratelimit-reset", "retry-after"):
        try:
            seconds = float(lowered[name])
        except (KeyError, ValueError):
            continue
        if 0 < seconds <= 300:
            return seconds
    return None


def check_response(response: Any, what: str) -> None:
    """Raise the `ApplicationError` a failed SDK response maps to; return when it succeeded.

    Args:
        response: An SDK response (`code`, `msg`, `raw.status_code`, `raw.headers`).
        what: What was attempted, for the message ("sending a text to chat oc_…").
    """
    if response.success():
        return
    raw = response.raw
    status = raw.status_code if raw is not None else 0
    headers = dict(raw.headers) if raw is not None else {}
    log_id = next((v for k, v in headers.items() if k.lower() == "x-tt-logid"), None)
    detail = f"Lark answered HTTP {status}, code {response.code}: {response.msg}" + (
        f" (log id {log_id})" if log_id else ""
    )
    if status == 429 or status >= 500 or response.code in RATE_LIMIT_CODES:
        raise _error(
            ErrorType.LARK_UNAVAILABLE,
            f"{what} failed, will retry: {detail}",
            retry_after=_retry_after(headers),
        )
    if response.code in TOKEN_CODES | AUTH_CODES or status in (401, 403):
        raise _error(
            ErrorType.LARK_AUTH_ERROR, f"{what} failed: {detail}; check the app's credentials and scopes"
        )
    raise _error(ErrorType.LARK_REJECTED, f"{what} failed: {detail}")


class LarkChannel:
    """Delivers to Lark chats, holding the (lazily created) SDK client."""

    def __init__(self, settings: Settings) -> None:
        """Keep the settings; the SDK is imported and the client built on the first delivery.

        Args:
            settings: Read for `lark_app_id`, `lark_app_secret` and `lark_domain`.
        """
        self._settings = settings
        self._client: Any = None
        self._lock = threading.Lock()

    def _sdk_client(self) -> Any:
        """The `lark.Client` (built once, in a worker thread)."""
        with self._lock:
            if self._client is None:
                lark = importlib.import_module("lark_oapi")
                try:
                    builder = lark.Client.builder().domain(self._settings.lark.domain)
                except ValueError as err:
                    raise _error(ErrorType.LARK_NOT_CONFIGURED, f"LARK_DOMAIN is not usable: {err}") from None
                self._client = (
                    builder.app_id(self._settings.lark.app_id)
                    .app_secret(self._settings.lark.app_secret)
                    .timeout(CLIENT_TIMEOUT_SECONDS)
                    .log_level(lark.LogLevel.WARNING)
                    .build()
                )
            return self._client

    def _forget_token(self) -> None:
        """Drop the cached tenant token, so the next call fetches a fresh one.

        The SDK caches it process-wide under `self_tenant_token:<app_id>` (lark-oapi 1.7.5,
        `core/token/manager.py`); an expired entry reads as absent.
        """
        manager = importlib.import_module("lark_oapi.core.token").TokenManager
        manager.cache.set(f"self_tenant_token:{self._settings.lark.app_id}", "", 0)

    def _call(self, method: str, request: Any, what: str) -> Any:
        """Run one `client.im.v1.message.<method>(request)` (blocking) and check its answer.

        A refused tenant token is forgotten and the call repeated once, so a token revoked before
        its expiry does not fail every delivery until the SDK's cache drops it.
        """
        client = self._sdk_client()
        for attempt in (1, 2):
            try:
                response = getattr(client.im.v1.message, method)(request)
            except Exception as err:  # the SDK raises plain exceptions: classify them
                mapped = self._sdk_exception(err, what)
                if mapped is None:
                    raise
                raise mapped from None
            if response.code in TOKEN_CODES and attempt == 1:
                self._forget_token()
                continue
            check_response(response, what)
            return response
        raise AssertionError("unreachable")

    def _sdk_exception(self, err: Exception, what: str) -> ApplicationError | None:
        """The error an SDK exception maps to; None for a bug (it propagates as it is)."""
        name = type(err).__name__
        if name == "ObtainAccessTokenException":
            code, msg = getattr(err, "code", None), getattr(err, "msg", "")
            detail = f"Lark refused a tenant access token for app {self._settings.lark.app_id!r}: code {code}: {msg}"
            if code in RATE_LIMIT_CODES or not (code in AUTH_CODES or 10000 <= (code or 0) < 11000):
                return _error(ErrorType.LARK_UNAVAILABLE, f"{what} failed, will retry: {detail}")
            return _error(
                ErrorType.LARK_AUTH_ERROR, f"{what} failed: {detail}; check LARK_APP_ID and LARK_APP_SECRET"
            )
        if name == "NoAuthorizationException":
            return _error(ErrorType.LARK_NOT_CONFIGURED, NOT_CONFIGURED)
        if isinstance(err, ValueError):  # json.JSONDecodeError: a proxy or gateway page, not Lark JSON
            return _error(
                ErrorType.LARK_UNAVAILABLE, f"{what} failed, will retry: Lark's answer was not JSON ({err})"
            )
        if isinstance(err, OSError):  # requests' ConnectionError, Timeout, ...: no answer
            return _error(ErrorType.LARK_UNAVAILABLE, f"{what} failed, will retry: {name}: {err}")
        return None

    def _send(
        self, message: OutboundMessage, msg_type: str, content: dict[str, Any], key: str, part: int
    ) -> str | None:
        """Send (or, with `reply_to`, reply with) one message; return its `message_id`."""
        im = importlib.import_module("lark_oapi.api.im.v1")
        body = json.dumps(content, ensure_ascii=False)
        key = str(uuid.uuid5(uuid.NAMESPACE_URL, f"{key}/{part}"))
        if message.reply_to and part == 0:
            reply_body = (
                im.ReplyMessageRequestBody.builder().msg_type(msg_type).content(body).uuid(key).build()
            )
            request = (
                im.ReplyMessageRequest.builder().message_id(message.reply_to).request_body(reply_body).build()
            )
            what = f"replying with a {msg_type} message to {message.reply_to} in chat {message.chat_id}"
            response = self._call("reply", request, what)
        else:
            create_body = (
                im.CreateMessageRequestBody.builder()
                .receive_id(message.chat_id)
                .msg_type(msg_type)
                .content(body)
                .uuid(key)
                .build()
            )
            request = (
                im.CreateMessageRequest.builder().receive_id_type("chat_id").request_body(create_body).build()
            )
            response = self._call(
                "create", request, f"sending a {msg_type} message to chat {message.chat_id}"
            )
        message_id: str | None = getattr(response.data, "message_id", None)
        return message_id

    def _patch(self, message_id: str, card: dict[str, Any], chat_id: str) -> None:
        im = importlib.import_module("lark_oapi.api.im.v1")
        body = im.PatchMessageRequestBody.builder().content(json.dumps(card, ensure_ascii=False)).build()
        request = im.PatchMessageRequest.builder().message_id(message_id).request_body(body).build()
        self._call("patch", request, f"updating card {message_id} in chat {chat_id}")

    def _deliver(self, message: OutboundMessage, key: str) -> Delivery:
        """The blocking body of `deliver_message`; `key` names this activity (for dedupe uuids)."""
        if message.kind == "text":
            parts = text_chunks(with_mentions(message.text or "", message.mentions))
            if not parts:
                raise invalid_outbound("a text message needs a non-empty `text`")
            ids = [
                self._send(message, "text", {"text": part}, key, index) for index, part in enumerate(parts)
            ]
            return Delivery(message_id=ids[0], parts=len(ids))
        request = message.interaction
        if request is None:
            raise invalid_outbound(f"a {message.kind} needs the `interaction` it shows")
        session_key = message.session_key or request.workflow_id.removeprefix(SESSION_PREFIX)
        link = self._settings.console_link(request.workflow_id, request.interaction_id)
        if message.kind == "approval_card":
            return Delivery(
                message_id=self._send(
                    message, "interactive", approval_card(request, session_key, link), key, 0
                )
            )
        # No outcome (escalated: more people may decide) or not complete (one approval of two
        # counted, "1/2"): the card still asks.
        card = (
            decided_card(request, message.outcome)
            if message.outcome is not None and message.outcome.complete
            else approval_card(request, session_key, link)
        )
        if message.card_message_id is None:
            # The approval card never arrived (its delivery failed): post the decision instead.
            return Delivery(message_id=self._send(message, "interactive", card, key, 0))
        self._patch(message.card_message_id, card, message.chat_id)
        return Delivery(message_id=message.card_message_id)

    def _check(self, message: OutboundMessage) -> None:
        if not (self._settings.lark.app_id and self._settings.lark.app_secret):
            raise _error(ErrorType.LARK_NOT_CONFIGURED, NOT_CONFIGURED)
        if message.channel != "lark":
            raise invalid_outbound(
                f"channel {message.channel!r} is not delivered by the Lark channel; expected 'lark'"
            )

    def deliver(self, message: OutboundMessage, key: str) -> Delivery:
        """Deliver one message (blocking: run it in a thread).

        `text`: sent as one or more text messages (long texts split on line boundaries; with
        `reply_to` the first part replies to that message). `approval_card`: the interactive
        card of `cards.approval_card`. `card_update`: `card_message_id` patched with
        `cards.decided_card` (posted as a new card when there is no card to update).

        Args:
            message: What to deliver, and where.
            key: Names this delivery: the same key sends each message once (Lark's uuid dedupe).

        Returns:
            The (first) message id and the number of messages sent.

        Raises:
            ApplicationError: `LarkUnavailable` (retryable), `LarkAuthError`, `LarkRejected`,
                `LarkNotConfigured`, `InvalidOutboundMessage` (non-retryable); see the module doc.
        """
        self._check(message)
        return self._deliver(message, key)
