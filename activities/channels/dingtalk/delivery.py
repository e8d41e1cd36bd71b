"""DingTalk, out: texts, Markdown, approval cards and card updates to a chat (for `deliver_message`).

Every call goes through the official OpenAPI SDK (`alibabacloud-dingtalk`), pointed at
DINGTALK_OPENAPI_ENDPOINT through its `Config(endpoint=..., protocol=...)`:
- the app's access token: `POST /v1.0/oauth2/accessToken` (cached until 5 minutes before it expires);
- texts and Markdown: `POST /v1.0/robot/groupMessages/send` to a group (`openConversationId`),
  `POST /v1.0/robot/oToMessages/batchSend` to one person (`chat_id` `user:<userId>`); long texts
  are split;
- the approval card: `POST /v1.0/card/instances/createAndDeliver` of DINGTALK_CARD_TEMPLATE_ID with
  `callbackType: "STREAM"` (without it, clicks never arrive) and the variables of
  `cards.card_params`; its `outTrackId` is the card's id; `PUT /v1.0/card/instances` updates it in
  place with the decision. Without a template the request and its decision go as Markdown.

Errors, as `ApplicationError` types the workflow's retry policy knows:
- `DingTalkUnavailable` (retryable): HTTP 429 or 5xx, a throttling code, no answer;
- `DingTalkAuthError` (non-retryable): the app's credentials or permissions were refused;
- `DingTalkRejected` (non-retryable): any other refusal (an unknown chat, template or card);
- `DingTalkNotConfigured` / `InvalidOutboundMessage` (non-retryable): nothing could be sent.
Messages name DingTalk's code, message and request id, never the client secret. A refused
access token is forgotten and the call repeated once, so a token revoked early does not fail
every delivery until it expires.
"""

from __future__ import annotations

import importlib
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import urlsplit

from temporalio.exceptions import ApplicationError

from contracts import Delivery, ErrorType, OutboundMessage
from contracts.names import SESSION_PREFIX
from core.settings import Settings

from ..delivery import invalid_outbound
from ..wording import text_chunks
from .cards import (
    TEXT_LIMIT,
    card_params,
    markdown_param,
    one_on_one,
    request_markdown,
    text_param,
    with_mentions,
)

T = TypeVar("T")

NOT_CONFIGURED = "DingTalk channel is not configured (set DINGTALK_CLIENT_ID, DINGTALK_CLIENT_SECRET)"
TIMEOUT_MS = 10_000
"""One OpenAPI request; the activity's start-to-close timeout covers a few of them."""
TOKEN_MARGIN_SECONDS = 300
THROTTLED = ("throttling", "qpslimit", "flowcontrol", "ratelimit")
"""Words in the codes DingTalk answers rate limits with (e.g. `Forbidden.AccessDenied.QpsLimitForApi`)."""
AUTH_CODES = frozenset(
    {"invalidauthentication", "invalidclientidorsecret", "invalid.clientid", "unauthorized"}
)
TOKEN_CODES = frozenset({"invalidauthentication"})
"""The access token itself was refused (expired or revoked): fetch a new one."""


_TOKENS: dict[tuple[str, str], tuple[str, float]] = {}
"""Access tokens by (endpoint, client id) until they are due, shared by every channel of the process."""
_TOKENS_LOCK = threading.Lock()


def _error(kind: ErrorType, message: str) -> ApplicationError:
    return ApplicationError(message, type=kind, non_retryable=kind != ErrorType.DINGTALK_UNAVAILABLE)


@dataclass(frozen=True)
class _Refusal:
    status: int
    code: str
    detail: str


def _unwrapped(err: Exception) -> Exception:
    """The SDK's own error inside its `UnretryableException` wrapper."""
    inner = getattr(err, "inner_exception", None)
    return _unwrapped(inner) if isinstance(inner, Exception) else err


def _refusal(err: Exception) -> _Refusal | None:
    """What DingTalk's answer to a refused request says (None for anything else: no answer)."""
    err = _unwrapped(err)
    if type(err).__name__ != "TeaException":
        return None
    data = getattr(err, "data", None)
    status = int(
        getattr(err, "statusCode", 0) or (data.get("statusCode", 0) if isinstance(data, dict) else 0)
    )
    code = str(getattr(err, "code", "") or "")
    request_id = data.get("requestid") if isinstance(data, dict) else None
    detail = f"DingTalk answered HTTP {status}, code {code}: {getattr(err, 'message', '')}" + (
        f" (request id {request_id})" if request_id else ""
    )
    return _Refusal(status, code, detail)


def classify(err: Exception, what: str) -> ApplicationError | None:
    """The `ApplicationError` an SDK exception maps to; None for a bug (it propagates as it is)."""
    refusal = _refusal(err)
    if refusal is not None:
        lowered = refusal.code.lower()
        if refusal.status == 429 or refusal.status >= 500 or any(word in lowered for word in THROTTLED):
            return _error(ErrorType.DINGTALK_UNAVAILABLE, f"{what} failed, will retry: {refusal.detail}")
        if refusal.status in (401, 403) or lowered in AUTH_CODES or lowered.startswith("forbidden"):
            return _error(
                ErrorType.DINGTALK_AUTH_ERROR,
                f"{what} failed: {refusal.detail}; check DINGTALK_CLIENT_ID, DINGTALK_CLIENT_SECRET and "
                "the app's permissions",
            )
        return _error(ErrorType.DINGTALK_REJECTED, f"{what} failed: {refusal.detail}")
    inner = _unwrapped(err)
    if inner is not err or type(err).__name__ == "RetryError" or isinstance(err, OSError):  # no answer
        return _error(
            ErrorType.DINGTALK_UNAVAILABLE, f"{what} failed, will retry: {type(inner).__name__}: {inner}"
        )
    return None


class DingTalkChannel:
    """Delivers to DingTalk chats through the OpenAPI SDK (imported and built on first use)."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self._lock = threading.Lock()
        self._sdk: dict[str, Any] | None = None

    # ------------------------------------------------------------------ SDK plumbing

    def _clients(self) -> dict[str, Any]:
        """The SDK's oauth2, robot and card clients (built once)."""
        with self._lock:
            if self._sdk is None:
                models = importlib.import_module("alibabacloud_tea_openapi.models")
                url = urlsplit(self._settings.dingtalk.openapi_endpoint)
                if not url.netloc:
                    raise _error(
                        ErrorType.DINGTALK_NOT_CONFIGURED,
                        f"DINGTALK_OPENAPI_ENDPOINT {self._settings.dingtalk.openapi_endpoint!r} is not a URL",
                    )
                config = models.Config(endpoint=url.netloc, protocol=url.scheme or "https")
                self._sdk = {
                    name: importlib.import_module(f"alibabacloud_dingtalk.{name}.client").Client(config)
                    for name in ("oauth2_1_0", "robot_1_0", "card_1_0")
                }
            return self._sdk

    def _runtime(self) -> Any:
        util = importlib.import_module("alibabacloud_tea_util.models")
        return util.RuntimeOptions(read_timeout=TIMEOUT_MS, connect_timeout=TIMEOUT_MS, autoretry=False)

    @property
    def _token_key(self) -> tuple[str, str]:
        return (self._settings.dingtalk.openapi_endpoint, self._settings.dingtalk.client_id or "")

    def _access_token(self) -> str:
        with _TOKENS_LOCK:
            cached = _TOKENS.get(self._token_key)
            if cached is not None and time.monotonic() < cached[1]:
                return cached[0]
        oauth2 = importlib.import_module("alibabacloud_dingtalk.oauth2_1_0.models")
        settings = self._settings.dingtalk
        request = oauth2.GetAccessTokenRequest(app_key=settings.client_id, app_secret=settings.client_secret)
        what = f"getting an access token for DingTalk app {settings.client_id!r}"
        try:
            body = (
                self._clients()["oauth2_1_0"].get_access_token_with_options(request, {}, self._runtime()).body
            )
        except Exception as err:
            mapped = classify(err, what)
            if mapped is None:
                raise
            raise mapped from None
        expires = time.monotonic() + max(int(body.expire_in or 0) - TOKEN_MARGIN_SECONDS, 60)
        with _TOKENS_LOCK:
            _TOKENS[self._token_key] = (str(body.access_token), expires)
        return str(body.access_token)

    def _call(self, what: str, method: Callable[..., T], request: Any, headers: Callable[..., Any]) -> T:
        """One OpenAPI request: `method(request, headers(token), runtime)`, its failure mapped."""
        for attempt in (1, 2):
            try:
                return method(
                    request, headers(x_acs_dingtalk_access_token=self._access_token()), self._runtime()
                )
            except ApplicationError:
                raise
            except Exception as err:
                refusal = _refusal(err)
                if refusal is not None and refusal.code.lower() in TOKEN_CODES and attempt == 1:
                    with _TOKENS_LOCK:
                        _TOKENS.pop(self._token_key, None)
                    continue
                mapped = classify(err, what)
                if mapped is None:
                    raise
                raise mapped from None
        raise AssertionError("unreachable")

    # ------------------------------------------------------------------ messages

    def _robot_message(self, chat_id: str, msg_key: str, msg_param: str) -> str | None:
        """One robot message to a group or a person; its `processQueryKey`."""
        robot = importlib.import_module("alibabacloud_dingtalk.robot_1_0.models")
        client = self._clients()["robot_1_0"]
        robot_code = self._settings.dingtalk.robot
        user = one_on_one(chat_id)
        if user is not None:
            request = robot.BatchSendOTORequest(
                robot_code=robot_code, user_ids=[user], msg_key=msg_key, msg_param=msg_param
            )
            response = self._call(
                f"sending a {msg_key} message to DingTalk user {user}",
                client.batch_send_otowith_options,
                request,
                robot.BatchSendOTOHeaders,
            )
        else:
            group = robot.OrgGroupSendRequest(
                robot_code=robot_code, open_conversation_id=chat_id, msg_key=msg_key, msg_param=msg_param
            )
            response = self._call(
                f"sending a {msg_key} message to DingTalk group {chat_id}",
                client.org_group_send_with_options,
                group,
                robot.OrgGroupSendHeaders,
            )
        key = getattr(response.body, "process_query_key", None)
        return str(key) if key else None

    def _texts(self, message: OutboundMessage) -> Delivery:
        parts = text_chunks(with_mentions(message.text or "", message.mentions), TEXT_LIMIT)
        if not parts:
            raise invalid_outbound("a text message needs a non-empty `text`")
        ids = [self._robot_message(message.chat_id, "sampleText", text_param(part)) for part in parts]
        return Delivery(message_id=ids[0], parts=len(ids))

    # ------------------------------------------------------------------ cards

    def _space(self, chat_id: str) -> dict[str, Any]:
        """Where a card goes: the group, or the bot's one-on-one chat with a person."""
        card = importlib.import_module("alibabacloud_dingtalk.card_1_0.models")
        robot_code = self._settings.dingtalk.robot
        user = one_on_one(chat_id)
        if user is not None:
            return {
                "open_space_id": f"dtv1.card//IM_ROBOT.{user}",
                "im_robot_open_space_model": card.CreateAndDeliverRequestImRobotOpenSpaceModel(
                    support_forward=False
                ),
                "im_robot_open_deliver_model": card.CreateAndDeliverRequestImRobotOpenDeliverModel(
                    space_type="IM_ROBOT", robot_code=robot_code
                ),
            }
        return {
            "open_space_id": f"dtv1.card//IM_GROUP.{chat_id}",
            "im_group_open_space_model": card.CreateAndDeliverRequestImGroupOpenSpaceModel(
                support_forward=False
            ),
            "im_group_open_deliver_model": card.CreateAndDeliverRequestImGroupOpenDeliverModel(
                robot_code=robot_code
            ),
        }

    def _create_card(self, chat_id: str, params: dict[str, str], out_track_id: str) -> str:
        card = importlib.import_module("alibabacloud_dingtalk.card_1_0.models")
        client = self._clients()["card_1_0"]
        request = card.CreateAndDeliverRequest(
            card_template_id=self._settings.dingtalk.card_template_id,
            out_track_id=out_track_id,
            callback_type="STREAM",
            card_data=card.CreateAndDeliverRequestCardData(card_param_map=params),
            user_id_type=1,
            **self._space(chat_id),
        )
        self._call(
            f"sending an approval card to DingTalk chat {chat_id}",
            client.create_and_deliver_with_options,
            request,
            card.CreateAndDeliverHeaders,
        )
        return out_track_id

    def _update_card(self, out_track_id: str, params: dict[str, str], chat_id: str) -> None:
        card = importlib.import_module("alibabacloud_dingtalk.card_1_0.models")
        client = self._clients()["card_1_0"]
        request = card.UpdateCardRequest(
            out_track_id=out_track_id,
            card_data=card.UpdateCardRequestCardData(card_param_map=params),
            card_update_options=card.UpdateCardRequestCardUpdateOptions(update_card_data_by_key=True),
            user_id_type=1,
        )
        self._call(
            f"updating card {out_track_id} in DingTalk chat {chat_id}",
            client.update_card_with_options,
            request,
            card.UpdateCardHeaders,
        )

    def _card(self, message: OutboundMessage, key: str) -> Delivery:
        request = message.interaction
        if request is None:
            raise invalid_outbound(f"a {message.kind} needs the `interaction` it shows")
        session_key = message.session_key or request.workflow_id.removeprefix(SESSION_PREFIX)
        link = self._settings.console_link(request.workflow_id, request.interaction_id)
        outcome = message.outcome if message.kind == "card_update" else None
        params = card_params(request, session_key, link, outcome)
        if not self._settings.dingtalk.card_template_id:  # no template: the request in Markdown
            markdown = request_markdown(params)
            sent = self._robot_message(message.chat_id, "sampleMarkdown", markdown_param(**markdown))
            return Delivery(message_id=None if message.kind == "approval_card" else sent)
        if message.kind == "card_update" and message.card_message_id:
            self._update_card(message.card_message_id, params, message.chat_id)
            return Delivery(message_id=message.card_message_id)
        # A new card; or the decision of one whose delivery failed, posted instead.
        out_track_id = f"synapse-{uuid.uuid5(uuid.NAMESPACE_URL, key)}"
        return Delivery(message_id=self._create_card(message.chat_id, params, out_track_id))

    # ------------------------------------------------------------------ the channel

    def deliver(self, message: OutboundMessage, key: str) -> Delivery:
        """Deliver one message (blocking: run it in a thread).

        Args:
            message: What to deliver, and where (`chat_id`: a group's openConversationId, or
                `user:<userId>`).
            key: Names this delivery, equal across its retries: a card's `outTrackId` comes from it.

        Returns:
            The (first) message's id: a card's `outTrackId` (to update it), else DingTalk's
            `processQueryKey`.

        Raises:
            ApplicationError: `DingTalkUnavailable` (retryable), `DingTalkAuthError`,
                `DingTalkRejected`, `DingTalkNotConfigured`, `InvalidOutboundMessage` (non-retryable).
        """
        settings = self._settings.dingtalk
        if not (settings.client_id and settings.client_secret):
            raise _error(ErrorType.DINGTALK_NOT_CONFIGURED, NOT_CONFIGURED)
        if message.channel != "dingtalk":
            raise invalid_outbound(
                f"channel {message.channel!r} is not delivered by the DingTalk channel; expected 'dingtalk'"
            )
        if message.kind == "text":
            return self._texts(message)
        return self._card(message, key)
