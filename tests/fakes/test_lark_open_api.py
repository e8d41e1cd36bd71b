"""The loopback Lark Open API stand-in, driven by the real `lark-oapi` client."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import lark_oapi as lark
import pytest
from lark_oapi.api.im.v1 import (
    CreateMessageRequest,
    CreateMessageRequestBody,
    PatchMessageRequest,
    PatchMessageRequestBody,
    ReplyMessageRequest,
    ReplyMessageRequestBody,
)
from lark_oapi.core.exception import ObtainAccessTokenException

from tests.fakes.lark_open_api import (
    APP_SECRET_INVALID,
    INVALID_ACCESS_TOKEN,
    INVALID_PARAMETER,
    RATE_LIMITED,
    TOKEN_PATH,
    FakeLarkOpenApi,
    lark_open_api,
)

CARD = {"schema": "2.0", "body": {"elements": [{"tag": "markdown", "content": "hi"}]}}


@pytest.fixture
async def fake() -> AsyncIterator[FakeLarkOpenApi]:
    async with lark_open_api() as server:
        yield server


def client(fake: FakeLarkOpenApi, secret: str | None = None) -> lark.Client:
    return (
        lark.Client.builder()
        .app_id(fake.app_id)
        .app_secret(secret or fake.app_secret)
        .domain(fake.base_url)
        .timeout(5)
        .build()
    )


def send(
    chat_id: str, msg_type: str, content: dict[str, Any], uuid: str | None = None
) -> CreateMessageRequest:
    body = (
        CreateMessageRequestBody.builder().receive_id(chat_id).msg_type(msg_type).content(json.dumps(content))
    )
    if uuid:
        body = body.uuid(uuid)
    return CreateMessageRequest.builder().receive_id_type("chat_id").request_body(body.build()).build()


async def test_send_reply_and_patch_through_the_sdk(fake: FakeLarkOpenApi) -> None:
    sdk = client(fake)
    asked = fake.user_message("oc_chat", "DELETE FROM orders")

    sent = await asyncio.to_thread(sdk.im.v1.message.create, send("oc_chat", "text", {"text": "hello"}))
    reply_body = ReplyMessageRequestBody.builder().msg_type("interactive").content(json.dumps(CARD)).build()
    replied = await asyncio.to_thread(
        sdk.im.v1.message.reply,
        ReplyMessageRequest.builder().message_id(asked).request_body(reply_body).build(),
    )
    new_card = {**CARD, "header": {"title": {"tag": "plain_text", "content": "done"}}}
    patch_body = PatchMessageRequestBody.builder().content(json.dumps(new_card)).build()
    patched = await asyncio.to_thread(
        sdk.im.v1.message.patch,
        PatchMessageRequest.builder().message_id(replied.data.message_id).request_body(patch_body).build(),
    )

    assert sent.success() and replied.success() and patched.success(), (sent.msg, replied.msg, patched.msg)
    assert sent.data.chat_id == "oc_chat" and sent.data.message_id.startswith("om_")
    token_request, send_request = fake.requests[0], fake.requests[1]
    assert token_request.path == TOKEN_PATH
    assert token_request.body == {"app_id": fake.app_id, "app_secret": fake.app_secret}
    assert (send_request.method, send_request.path, send_request.query) == (
        "POST",
        "/open-apis/im/v1/messages",
        {"receive_id_type": "chat_id"},
    )
    assert send_request.authorization == f"Bearer {next(iter(fake.tokens))}"
    assert [(m.chat_id, m.msg_type, m.content, m.reply_to) for m in fake.sent()] == [
        ("oc_chat", "text", {"text": "hello"}, None),
        ("oc_chat", "interactive", new_card, asked),
    ], "a card shows its latest version"
    assert fake.card_updates()[0].message_id == replied.data.message_id
    assert fake.card_updates()[0].content == new_card
    assert [r.path for r in fake.requests].count(TOKEN_PATH) == 1, "the SDK caches the tenant token"


async def test_a_repeated_uuid_is_one_message(fake: FakeLarkOpenApi) -> None:
    sdk = client(fake)
    first = await asyncio.to_thread(sdk.im.v1.message.create, send("oc_1", "text", {"text": "a"}, "u-1"))
    again = await asyncio.to_thread(sdk.im.v1.message.create, send("oc_1", "text", {"text": "a"}, "u-1"))

    assert first.data.message_id == again.data.message_id
    assert len(fake.sent()) == 1 and len(fake.api_requests()) == 2


async def test_scripted_failures_come_in_order(fake: FakeLarkOpenApi) -> None:
    sdk = client(fake)
    fake.fail_next(
        429, RATE_LIMITED, "request trigger frequency limit", headers={"x-ogw-ratelimit-reset": "2"}
    )
    fake.fail_next(502)

    limited = await asyncio.to_thread(sdk.im.v1.message.create, send("oc_1", "text", {"text": "a"}))
    with pytest.raises(json.JSONDecodeError):
        await asyncio.to_thread(sdk.im.v1.message.create, send("oc_1", "text", {"text": "a"}))
    ok = await asyncio.to_thread(sdk.im.v1.message.create, send("oc_1", "text", {"text": "a"}))

    assert (limited.raw.status_code, limited.code, limited.msg) == (
        429,
        RATE_LIMITED,
        "request trigger frequency limit",
    )
    assert limited.raw.headers["x-ogw-ratelimit-reset"] == "2"
    assert ok.success() and fake.pending_failures == 0


async def test_refusals(fake: FakeLarkOpenApi) -> None:
    sdk = client(fake)
    unknown = ReplyMessageRequestBody.builder().msg_type("text").content('{"text": "x"}').build()
    reply = await asyncio.to_thread(
        sdk.im.v1.message.reply,
        ReplyMessageRequest.builder().message_id("om_nope").request_body(unknown).build(),
    )
    empty = await asyncio.to_thread(sdk.im.v1.message.create, send("oc_1", "text", {"text": " "}))
    fake.revoke_tokens()
    revoked = await asyncio.to_thread(sdk.im.v1.message.create, send("oc_1", "text", {"text": "a"}))

    assert (reply.code, empty.code) == (INVALID_PARAMETER, INVALID_PARAMETER)
    assert revoked.code == INVALID_ACCESS_TOKEN and revoked.raw.status_code == 400
    assert fake.sent() == []


async def test_wrong_secret_gets_no_token() -> None:
    async with lark_open_api() as fake:
        with pytest.raises(ObtainAccessTokenException) as caught:
            await asyncio.to_thread(
                client(fake, secret="wrong").im.v1.message.create, send("oc_1", "text", {"text": "a"})
            )

    assert (caught.value.code, caught.value.msg) == (APP_SECRET_INVALID, "app secret invalid")
    assert [r.path for r in fake.requests] == [TOKEN_PATH]
