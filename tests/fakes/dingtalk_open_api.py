"""A loopback stand-in for DingTalk's Stream gateway and OpenAPI (the parts the DingTalk channel uses).

Shaped after DingTalk's public docs; the real `dingtalk-stream` client and the real
`alibabacloud-dingtalk` SDK talk to it (`DINGTALK_OPENAPI_ENDPOINT` = `fake.base_url`):

- `POST /v1.0/gateway/connections/open` `{clientId, clientSecret, subscriptions, ua, localIp}` →
  `{"endpoint": "ws://…/gateway", "ticket"}`; wrong credentials → 401.
- WebSocket `/gateway?ticket=…` (a ticket opens one connection): the fake pushes frames as
  `{"specVersion", "type": "CALLBACK", "headers": {"messageId", "topic", "contentType", "time",
  "appId", "connectionId"}, "data": "<JSON string>"}` and records every frame the client sends
  back (acks: `{"code": 200, "headers": {"messageId", "contentType"}, "message", "data"}`).
- `POST /v1.0/oauth2/accessToken` `{appKey, appSecret}` → `{"accessToken", "expireIn": 7200}`;
  wrong pair → 400 `invalidClientIdOrSecret`.
- `POST /v1.0/robot/groupMessages/send` `{robotCode, openConversationId, msgKey, msgParam}`,
  `POST /v1.0/robot/oToMessages/batchSend` `{robotCode, userIds, msgKey, msgParam}` →
  `{"processQueryKey"}`.
- `POST /v1.0/card/instances/createAndDeliver` `{cardTemplateId, outTrackId, callbackType,
  cardData: {cardParamMap}, openSpaceId, im*OpenSpaceModel, im*OpenDeliverModel}` (a repeated
  `outTrackId` is the same card), `PUT /v1.0/card/instances` `{outTrackId, cardData:
  {cardParamMap}, cardUpdateOptions}` (an unknown card → 400 `param.cardNotExist`).

The OpenAPI calls need header `x-acs-dingtalk-access-token` with a token this fake issued (401
`InvalidAuthentication` otherwise). Refusals are `{"code", "message", "requestid"}`.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import secrets
import time
from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

from ..support import running

MESSAGE_TOPIC = "/v1.0/im/bot/messages/get"
CARD_TOPIC = "/v1.0/card/instances/callback"


@dataclass(frozen=True)
class Call:
    """One OpenAPI request the fake received."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any


@dataclass
class Card:
    """A card instance the app created: where it went, its variables now, and their history."""

    out_track_id: str
    template_id: str
    callback_type: str
    open_space_id: str
    params: dict[str, str]
    robot_code: str
    updates: list[dict[str, str]] = field(default_factory=list)


@dataclass(frozen=True)
class Sent:
    """A robot message: to a group (`conversation`) or to people (`users`)."""

    msg_key: str
    param: dict[str, Any]
    robot_code: str
    conversation: str | None = None
    users: tuple[str, ...] = ()

    @property
    def text(self) -> str:
        """The text (`sampleText` content, `sampleMarkdown` text)."""
        return str(self.param.get("content") or self.param.get("text") or "")


@dataclass
class _Failure:
    status: int
    code: str
    path_prefix: str


@dataclass
class FakeDingTalk:
    """The running stand-in: credentials it accepts, frames it pushed and got, what the app sent."""

    client_id: str = field(default_factory=lambda: f"ding{secrets.token_hex(8)}")
    client_secret: str = "fake-dingtalk-secret-0123456789"
    base_url: str = ""
    calls: list[Call] = field(default_factory=list)
    sent: list[Sent] = field(default_factory=list)
    cards: dict[str, Card] = field(default_factory=dict)
    opened: list[dict[str, Any]] = field(default_factory=list)
    """Bodies of the connection-open calls, oldest first."""
    received: list[dict[str, Any]] = field(default_factory=list)
    """Frames the client sent back (acks), oldest first."""
    _tokens: set[str] = field(default_factory=set)
    _tickets: set[str] = field(default_factory=set)
    _socket: WebSocket | None = None
    _connected: asyncio.Event = field(default_factory=asyncio.Event)
    _got: asyncio.Condition = field(default_factory=asyncio.Condition)
    _failures: deque[_Failure] = field(default_factory=deque)
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    # ------------------------------------------------------------------ scripting

    def fail_next(self, status: int, code: str, *, path_prefix: str = "/v1.0/robot/") -> None:
        """Refuse the next request whose path starts with `path_prefix` with `status` and `code`."""
        self._failures.append(_Failure(status, code, path_prefix))

    def revoke_tokens(self) -> None:
        """Invalidate every access token issued so far."""
        self._tokens.clear()

    @property
    def connections(self) -> int:
        """Connections opened so far (open calls whose ticket was used)."""
        return len(self.opened)

    async def connected(self, within: float = 15.0) -> None:
        """Wait until a client holds an open connection."""
        async with asyncio.timeout(within):
            await self._connected.wait()

    async def drop(self) -> None:
        """Close the client's connection, as a gateway restart does."""
        socket = self._socket
        self._connected.clear()
        self._socket = None
        if socket is not None:
            await socket.close(code=1012)

    # ------------------------------------------------------------------ frames

    def bot_message(
        self,
        text: str,
        *,
        conversation: str = "cidGroupA+1/2==",
        sender: str = "alice",
        group: bool = True,
        mentioned: bool = True,
        msg_id: str | None = None,
        msgtype: str = "text",
    ) -> dict[str, Any]:
        """A bot message as DingTalk sends it (topic `/v1.0/im/bot/messages/get`)."""
        message: dict[str, Any] = {
            "conversationId": conversation,
            "conversationType": "2" if group else "1",
            "chatbotCorpId": "dingcorp",
            "chatbotUserId": "$:LWCP_v1:$bot",
            "msgId": msg_id or f"msg{next(self._ids)}{secrets.token_hex(4)}",
            "senderNick": sender.title(),
            "isAdmin": False,
            "senderStaffId": sender,
            "sessionWebhookExpiredTime": int(time.time() * 1000) + 3_600_000,
            "createAt": int(time.time() * 1000),
            "senderCorpId": "dingcorp",
            "senderId": f"$:LWCP_v1:${sender}",
            "robotCode": self.client_id,
            "msgtype": msgtype,
            "isInAtList": mentioned,
            "sessionWebhook": f"{self.base_url}/robot/sendBySession?session=x",
        }
        if group:
            message["conversationTitle"] = "Ops"
        if msgtype == "text":
            message["text"] = {"content": f" {text}"}
        else:
            message["content"] = {"downloadCode": "dc1"}
        return message

    def card_click(self, out_track_id: str, user: str, params: dict[str, Any]) -> dict[str, Any]:
        """A card callback as DingTalk sends it (topic `/v1.0/card/instances/callback`)."""
        card = self.cards.get(out_track_id)
        return {
            "extension": "{}",
            "corpId": "dingcorp",
            "type": "actionCallback",
            "userId": user,
            "content": json.dumps(
                {"cardPrivateData": {"actionIds": [params.get("action")], "params": params}}
            ),
            "outTrackId": out_track_id,
            "spaceType": "IM",
            "spaceId": card.open_space_id if card else "",
            "userIdType": 1,
        }

    async def push(self, topic: str, data: dict[str, Any], frame_id: str | None = None) -> str:
        """Send a CALLBACK frame to the connected client; its `messageId`."""
        await self.connected()
        socket = self._socket
        assert socket is not None
        frame_id = frame_id or f"frame-{next(self._ids)}-{secrets.token_hex(4)}"
        frame = {
            "specVersion": "1.0",
            "type": "CALLBACK",
            "headers": {
                "appId": self.client_id,
                "connectionId": "conn-1",
                "contentType": "application/json",
                "messageId": frame_id,
                "time": str(int(time.time() * 1000)),
                "topic": topic,
            },
            "data": json.dumps(data, ensure_ascii=False),
        }
        await socket.send_text(json.dumps(frame, ensure_ascii=False))
        return frame_id

    async def ack(self, frame_id: str, within: float = 10.0) -> dict[str, Any]:
        """The client's ack of a frame (waits for it)."""
        async with asyncio.timeout(within), self._got:
            while True:
                for frame in self.received:
                    if frame.get("headers", {}).get("messageId") == frame_id:
                        return frame
                await self._got.wait()

    # ------------------------------------------------------------------ what the app sent

    def texts(self, *, conversation: str | None = None, user: str | None = None) -> list[str]:
        """Texts of the robot messages to a group or to a person, oldest first."""
        return [
            s.text
            for s in self.sent
            if (conversation is None or s.conversation == conversation) and (user is None or user in s.users)
        ]

    # ------------------------------------------------------------------ the server

    def _refusal(self, status: int, code: str, message: str) -> JSONResponse:
        return JSONResponse({"code": code, "message": message, "requestid": f"req-{next(self._ids)}"}, status)

    def _scripted(self, path: str) -> JSONResponse | None:
        for failure in list(self._failures):
            if path.startswith(failure.path_prefix):
                self._failures.remove(failure)
                return self._refusal(failure.status, failure.code, f"scripted {failure.code}")
        return None

    async def _open(self, request: Request) -> JSONResponse:
        body = await request.json()
        if body.get("clientId") != self.client_id or body.get("clientSecret") != self.client_secret:
            return self._refusal(401, "InvalidAuthentication", "clientId or clientSecret is wrong")
        ticket = secrets.token_urlsafe(12)
        self._tickets.add(ticket)
        self.opened.append(body)
        return JSONResponse(
            {"endpoint": self.base_url.replace("http://", "ws://") + "/gateway", "ticket": ticket}
        )

    async def _gateway(self, socket: WebSocket) -> None:
        ticket = socket.query_params.get("ticket", "")
        if ticket not in self._tickets:
            await socket.close(code=1008)
            return
        self._tickets.discard(ticket)
        await socket.accept()
        self._socket = socket
        self._connected.set()
        try:
            while True:
                frame = json.loads(await socket.receive_text())
                async with self._got:
                    self.received.append(frame)
                    self._got.notify_all()
        except (WebSocketDisconnect, RuntimeError):
            pass
        finally:
            if self._socket is socket:
                self._socket = None
                self._connected.clear()

    async def _token(self, request: Request) -> JSONResponse:
        body = await request.json()
        self.calls.append(Call("POST", request.url.path, dict(request.headers), body))
        scripted = self._scripted(request.url.path)
        if scripted is not None:
            return scripted
        if body.get("appKey") != self.client_id or body.get("appSecret") != self.client_secret:
            return self._refusal(400, "invalidClientIdOrSecret", "无效的clientId或者clientSecret")
        token = f"at-{secrets.token_hex(8)}"
        self._tokens.add(token)
        return JSONResponse({"accessToken": token, "expireIn": 7200})

    async def _api(self, request: Request) -> JSONResponse:
        body = await request.json()
        path = request.url.path
        self.calls.append(Call(request.method, path, dict(request.headers), body))
        if request.headers.get("x-acs-dingtalk-access-token", "").strip('"') not in self._tokens:
            return self._refusal(401, "InvalidAuthentication", "不合法的access_token")
        scripted = self._scripted(path)
        if scripted is not None:
            return scripted
        robot = str(body.get("robotCode") or "")
        if path == "/v1.0/robot/groupMessages/send":
            param = json.loads(body["msgParam"])
            self.sent.append(Sent(body["msgKey"], param, robot, conversation=body["openConversationId"]))
        elif path == "/v1.0/robot/oToMessages/batchSend":
            param = json.loads(body["msgParam"])
            self.sent.append(Sent(body["msgKey"], param, robot, users=tuple(body["userIds"])))
        elif path == "/v1.0/card/instances/createAndDeliver":
            return self._create(body)
        elif path == "/v1.0/card/instances" and request.method == "PUT":
            card = self.cards.get(str(body.get("outTrackId")))
            if card is None:
                return self._refusal(400, "param.cardNotExist", "card instance does not exist")
            params = {str(k): str(v) for k, v in body["cardData"]["cardParamMap"].items()}
            card.params = (
                {**card.params, **params}
                if body.get("cardUpdateOptions", {}).get("updateCardDataByKey")
                else params
            )
            card.updates.append(params)
            return JSONResponse({"result": True, "success": True})
        return JSONResponse({"processQueryKey": f"pqk-{next(self._ids)}"})

    def _create(self, body: dict[str, Any]) -> JSONResponse:
        out_track_id = str(body.get("outTrackId") or "")
        if not out_track_id or not body.get("cardTemplateId"):
            return self._refusal(400, "param.outTrackIdEmpty", "outTrackId and cardTemplateId are required")
        params = body.get("cardData", {}).get("cardParamMap", {})
        if any(not isinstance(v, str) for v in params.values()):
            return self._refusal(400, "param.cardParamMapInvalid", "cardParamMap values must be strings")
        deliver = body.get("imGroupOpenDeliverModel") or body.get("imRobotOpenDeliverModel") or {}
        self.cards.setdefault(
            out_track_id,
            Card(
                out_track_id,
                str(body["cardTemplateId"]),
                str(body.get("callbackType") or ""),
                str(body.get("openSpaceId") or ""),
                dict(params),
                str(deliver.get("robotCode") or ""),
            ),
        )
        space = str(body.get("openSpaceId") or "")
        return JSONResponse(
            {
                "success": True,
                "result": {
                    "outTrackId": out_track_id,
                    "deliverResults": [{"spaceId": space, "success": True}],
                },
            }
        )

    def app(self) -> Starlette:
        """The ASGI app of the stand-in."""
        return Starlette(
            routes=[
                Route("/v1.0/gateway/connections/open", self._open, methods=["POST"]),
                WebSocketRoute("/gateway", self._gateway),
                Route("/v1.0/oauth2/accessToken", self._token, methods=["POST"]),
                Route("/v1.0/{rest:path}", self._api, methods=["POST", "PUT"]),
            ]
        )


@asynccontextmanager
async def dingtalk_open_api() -> AsyncIterator[FakeDingTalk]:
    """Run the stand-in on a free loopback port."""
    fake = FakeDingTalk()
    async with running(fake.app()) as base_url:
        fake.base_url = base_url
        yield fake
        await fake.drop()
