"""`deliver_message` through the real `lark-oapi` client against the loopback Open API stand-in."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from temporalio.exceptions import ApplicationError

from activities.channels.delivery import ChatDelivery
from activities.channels.lark.cards import TEXT_LIMIT
from activities.channels.lark.delivery import LarkChannel
from contracts import (
    Delivery,
    InteractionOutcome,
    InteractionRequest,
    OutboundMessage,
    ToolApprovalAsk,
    content_of,
)
from core.settings import LarkSettings, Settings
from tests.activities.channels.delivering import deliver, environment
from tests.fakes.lark_open_api import (
    BOT_NOT_IN_CHAT,
    CHAT_RATE_LIMITED,
    RATE_LIMITED,
    SCOPE_NOT_ENABLED,
    TOKEN_PATH,
    FakeLarkOpenApi,
    lark_open_api,
)
from tests.support import free_port

CHAT = "oc_5ad11d72b830411d72b836c20"
ASKED_AT = datetime(2026, 5, 1, 10, 0, tzinfo=UTC)
DELETE = "DELETE FROM orders\nWHERE status = 'cancelled'"


@pytest.fixture
async def fake() -> AsyncIterator[FakeLarkOpenApi]:
    async with lark_open_api() as server:
        yield server


def settings_for(fake: FakeLarkOpenApi, **overrides: Any) -> Settings:
    values = {"app_id": fake.app_id, "app_secret": fake.app_secret, "domain": fake.base_url}
    return Settings(lark=LarkSettings(**{**values, **overrides}), _env_file=None)


def text(body: str, reply_to: str | None = None) -> OutboundMessage:
    return OutboundMessage(channel="lark", chat_id=CHAT, kind="text", text=body, reply_to=reply_to)


def request(approvers: list[str] | None = None) -> InteractionRequest:
    ask = ToolApprovalAsk(
        tool="sql",
        arguments={"sql": DELETE},
        description="Run one SQL statement",
        summary="sql: DELETE FROM orders WHERE status = 'cancelled'",
        reason="DELETE changes data",
    )
    return InteractionRequest(
        interaction_id="tool_1",
        interaction_type="tool_approval",
        workflow_id=f"session:lark:{CHAT}",
        content=content_of(ask),
        ask=ask,
        timestamp=ASKED_AT,
        approvers=approvers or [],
        requested_by="lark:ou_requester",
        expires_at=ASKED_AT + timedelta(minutes=5),
    )


def outcome(**fields: Any) -> InteractionOutcome:
    values = {"interaction_id": "tool_1", "channel": "lark", "decided_at": ASKED_AT + timedelta(minutes=2)}
    return InteractionOutcome(**{**values, **fields})


def markdown(card: dict[str, Any]) -> str:
    return "\n".join(e["content"] for e in card["body"]["elements"] if e.get("tag") == "markdown")


def buttons(card: dict[str, Any]) -> list[dict[str, Any]]:
    rows = [e for e in card["body"]["elements"] if e.get("tag") == "column_set"]
    return [
        b for row in rows for column in row["columns"] for b in column["elements"] if b["tag"] == "button"
    ]


async def test_text_is_sent_to_the_chat_with_the_tenant_token(fake: FakeLarkOpenApi) -> None:
    delivery = await deliver(settings_for(fake), text("3 orders deleted."))

    token_request, send = fake.requests
    assert token_request.path == TOKEN_PATH
    assert (send.method, send.path, send.query) == (
        "POST",
        "/open-apis/im/v1/messages",
        {"receive_id_type": "chat_id"},
    )
    assert send.authorization == f"Bearer {next(iter(fake.tokens))}"
    assert send.headers["content-type"].startswith("application/json")
    assert {k: send.body[k] for k in ("receive_id", "msg_type")} == {"receive_id": CHAT, "msg_type": "text"}
    assert json.loads(send.body["content"]) == {"text": "3 orders deleted."}
    assert send.body["uuid"], "sends carry a dedupe uuid"
    assert delivery == Delivery(message_id=fake.sent()[0].message_id, parts=1)


async def test_reply_to_uses_the_reply_endpoint(fake: FakeLarkOpenApi) -> None:
    asked = fake.user_message(CHAT, "delete the cancelled orders")

    delivery = await deliver(settings_for(fake), text("Done.", reply_to=asked))

    (reply,) = fake.api_requests()
    assert (reply.method, reply.path) == ("POST", f"/open-apis/im/v1/messages/{asked}/reply")
    assert reply.body["msg_type"] == "text" and json.loads(reply.body["content"]) == {"text": "Done."}
    (sent,) = fake.sent()
    assert (sent.reply_to, sent.chat_id, delivery.message_id) == (asked, CHAT, sent.message_id)


async def test_a_long_text_is_split_on_lines(fake: FakeLarkOpenApi) -> None:
    lines = [f"{n:02d} " + "x" * 1500 for n in range(8)]
    asked = fake.user_message(CHAT, "show me everything")
    settings = settings_for(fake)

    delivery = await deliver(settings, text("\n".join(lines), reply_to=asked))

    sent = fake.sent()
    assert delivery == Delivery(message_id=sent[0].message_id, parts=len(sent))
    assert len(sent) == 4 and all(len(m.content["text"]) <= TEXT_LIMIT for m in sent)
    assert "\n".join(m.content["text"] for m in sent) == "\n".join(lines)
    assert [m.reply_to for m in sent] == [asked, None, None, None], "only the first part replies"


async def test_a_retried_delivery_does_not_repeat_parts_already_sent(fake: FakeLarkOpenApi) -> None:
    settings = settings_for(fake)
    message = text("\n".join("y" * 3000 for _ in range(3)))
    env = environment()  # run twice: one activity, retried
    # The first part goes out, the second hits the chat's rate limit: the attempt fails.
    fake.fail_next(429, CHAT_RATE_LIMITED, "This operation triggers the frequency limit", after=1)

    with pytest.raises(ApplicationError):
        await env.run(ChatDelivery(settings).deliver_message, message)
    delivery = await env.run(ChatDelivery(settings).deliver_message, message)

    assert delivery.parts == 3 and len(fake.sent()) == 3
    first, refused, *retried = [r.body["uuid"] for r in fake.api_requests()]
    assert retried == [first, refused, retried[2]] and len(set(retried)) == 3, "retries reuse uuids"


async def test_approval_card(fake: FakeLarkOpenApi) -> None:
    message = OutboundMessage(
        channel="lark", chat_id=CHAT, kind="approval_card", interaction=request(["lark:ou_alice", "bob"])
    )

    delivery = await deliver(settings_for(fake), message)

    (card,) = fake.sent()
    assert (card.msg_type, delivery.message_id) == ("interactive", card.message_id)
    assert card.content["schema"] == "2.0" and card.content["config"]["update_multi"] is True
    assert card.content["header"]["title"]["content"] == "Approval needed: sql"
    assert [b["behaviors"] for b in buttons(card.content)] == [
        [
            {
                "type": "callback",
                "value": {
                    "action": "approve",
                    "session_key": f"lark:{CHAT}",
                    "interaction_id": "tool_1",
                    "workflow_id": f"session:lark:{CHAT}",
                },
            }
        ],
        [
            {
                "type": "callback",
                "value": {
                    "action": "deny",
                    "session_key": f"lark:{CHAT}",
                    "interaction_id": "tool_1",
                    "workflow_id": f"session:lark:{CHAT}",
                },
            }
        ],
    ]
    text_of = markdown(card.content)
    assert f"```sql\n{DELETE}\n```" in text_of
    assert "**Why it needs approval:** DELETE changes data" in text_of
    assert "**Who may approve:** <at id=ou_alice></at>, bob" in text_of
    assert "**Deadline:** 2026-05-01 10:05:00 UTC" in text_of
    assert "确认" in text_of and "取消" in text_of


async def test_card_update_patches_the_card_with_the_decision(fake: FakeLarkOpenApi) -> None:
    settings = settings_for(fake)
    card = await deliver(
        settings, OutboundMessage(channel="lark", chat_id=CHAT, kind="approval_card", interaction=request())
    )
    decided = outcome(
        approved=True,
        decided_by="lark:ou_alice",
        comment="ok, go",
        tool_result={"tool_id": "sql", "ok": True, "content": {"statement": "DELETE", "rowcount": 3}},
    )
    update = OutboundMessage(
        channel="lark",
        chat_id=CHAT,
        kind="card_update",
        interaction=request(),
        outcome=decided,
        card_message_id=card.message_id,
    )

    delivery = await deliver(settings, update)

    patch = fake.api_requests()[-1]
    assert (patch.method, patch.path) == ("PATCH", f"/open-apis/im/v1/messages/{card.message_id}")
    (updated,) = fake.card_updates()
    assert json.loads(patch.body["content"]) == updated.content
    assert updated.content["header"]["title"]["content"] == "Approved: sql"
    assert buttons(updated.content) == []
    text_of = markdown(updated.content)
    assert "**Approved** by <at id=ou_alice></at> at 2026-05-01 10:02:00 UTC" in text_of
    assert "**Comment:** ok, go" in text_of and "**Result:** DELETE done: 3 rows affected." in text_of
    assert delivery.message_id == card.message_id and len(fake.sent()) == 1


async def test_an_escalated_card_is_redrawn_asking_the_new_approvers_too(fake: FakeLarkOpenApi) -> None:
    settings = settings_for(fake)
    card = await deliver(
        settings,
        OutboundMessage(
            channel="lark", chat_id=CHAT, kind="approval_card", interaction=request(["lark:ou_alice"])
        ),
    )
    escalated = request(["lark:ou_alice", "ou_dave"])
    update = OutboundMessage(
        channel="lark",
        chat_id=CHAT,
        kind="card_update",
        interaction=escalated,
        card_message_id=card.message_id,
    )

    await deliver(settings, update)

    (updated,) = fake.card_updates()
    assert "**Who may approve:** <at id=ou_alice></at>, <at id=ou_dave></at>" in markdown(updated.content)
    assert len(buttons(updated.content)) == 2, "it still asks: approve or deny"


async def test_a_reminder_mentions_the_people_it_names(fake: FakeLarkOpenApi) -> None:
    reminder = OutboundMessage(
        channel="lark",
        chat_id=CHAT,
        kind="text",
        text="⏫ `tool_1` is still waiting for a decision; please decide:",
        mentions=["lark:ou_dave", "bob <b>"],
    )

    await deliver(settings_for(fake), reminder)

    (sent,) = fake.sent()
    assert sent.content["text"] == (
        '⏫ `tool_1` is still waiting for a decision; please decide: <at user_id="ou_dave"></at>, bob &#60;b&#62;'
    )


async def test_a_timed_out_card_reads_cancelled_and_is_posted_when_there_is_no_card(
    fake: FakeLarkOpenApi,
) -> None:
    timed_out = outcome(
        approved=False, decided_by="system:timeout", channel="system", comment="no decision in 0:05:00"
    )
    update = OutboundMessage(
        channel="lark", chat_id=CHAT, kind="card_update", interaction=request(), outcome=timed_out
    )

    delivery = await deliver(settings_for(fake), update)

    (posted,) = fake.sent()
    assert posted.message_id == delivery.message_id and fake.card_updates() == []
    assert posted.content["header"]["title"]["content"] == "Timed out — cancelled: sql"
    assert "**Timed out — cancelled** at 2026-05-01 10:02:00 UTC" in markdown(posted.content)
    assert "Result" not in markdown(posted.content)


async def test_rate_limit_is_retryable_with_the_gateway_delay(fake: FakeLarkOpenApi) -> None:
    fake.fail_next(
        429, RATE_LIMITED, "request trigger frequency limit", headers={"x-ogw-ratelimit-reset": "3"}
    )

    with pytest.raises(ApplicationError) as caught:
        await deliver(settings_for(fake), text("hi"))

    err = caught.value
    assert (err.type, err.non_retryable, err.next_retry_delay) == (
        "LarkUnavailable",
        False,
        timedelta(seconds=3),
    )
    assert "HTTP 429, code 99991400: request trigger frequency limit" in err.message
    assert f"chat {CHAT}" in err.message and "log id" in err.message


@pytest.mark.parametrize(("status", "code"), [(500, 1000004), (502, None)])
async def test_server_errors_are_retryable(fake: FakeLarkOpenApi, status: int, code: int | None) -> None:
    fake.fail_next(status, code, "internal error")

    with pytest.raises(ApplicationError) as caught:
        await deliver(settings_for(fake), text("hi"))

    assert (caught.value.type, caught.value.non_retryable) == ("LarkUnavailable", False)


async def test_no_server_is_retryable() -> None:
    settings = Settings(
        lark=LarkSettings(app_id="cli_nobody", app_secret="s", domain=f"http://127.0.0.1:{free_port()}"),
        _env_file=None,
    )

    with pytest.raises(ApplicationError) as caught:
        await deliver(settings, text("hi"))

    assert (caught.value.type, caught.value.non_retryable) == ("LarkUnavailable", False)


async def test_wrong_credentials_are_not_retried_and_the_secret_is_never_shown(fake: FakeLarkOpenApi) -> None:
    secret = "s3cr3t-that-must-not-leak"

    with pytest.raises(ApplicationError) as caught:
        await deliver(settings_for(fake, app_secret=secret), text("hi"))

    err = caught.value
    assert (err.type, err.non_retryable) == ("LarkAuthError", True)
    assert "code 10014: app secret invalid" in err.message and fake.app_id in err.message
    assert secret not in err.message and secret not in repr(err.__cause__)
    assert fake.api_requests() == []


async def test_missing_scope_is_an_auth_error(fake: FakeLarkOpenApi) -> None:
    fake.fail_next(
        400, SCOPE_NOT_ENABLED, "Access denied. One of the following scopes is required: [im:message]"
    )

    with pytest.raises(ApplicationError) as caught:
        await deliver(settings_for(fake), text("hi"))

    assert (caught.value.type, caught.value.non_retryable) == ("LarkAuthError", True)
    assert "code 99991672" in caught.value.message and fake.app_secret not in caught.value.message


async def test_other_refusals_are_rejected_without_retry(fake: FakeLarkOpenApi) -> None:
    fake.fail_next(400, BOT_NOT_IN_CHAT, "Bot/User can NOT be out of the chat.")

    with pytest.raises(ApplicationError) as caught:
        await deliver(settings_for(fake), text("hi"))

    err = caught.value
    assert (err.type, err.non_retryable) == ("LarkRejected", True)
    assert f"sending a text message to chat {CHAT} failed" in err.message
    assert "HTTP 400, code 230002: Bot/User can NOT be out of the chat." in err.message


async def test_a_revoked_token_is_refreshed_once(fake: FakeLarkOpenApi) -> None:
    settings = settings_for(fake)
    await deliver(settings, text("one"))
    fake.revoke_tokens()

    await deliver(settings, text("two"))

    assert [r.path for r in fake.requests].count(TOKEN_PATH) == 2
    assert [m.content["text"] for m in fake.sent()] == ["one", "two"]


@pytest.mark.parametrize(
    "overrides",
    [{"app_id": None}, {"app_secret": None}, {"app_id": "", "app_secret": ""}],
)
async def test_not_configured(fake: FakeLarkOpenApi, overrides: dict[str, Any]) -> None:
    with pytest.raises(ApplicationError) as caught:
        await deliver(settings_for(fake, **overrides), text("hi"))

    assert (caught.value.type, caught.value.non_retryable) == ("LarkNotConfigured", True)
    assert caught.value.message == "Lark channel is not configured (set LARK_APP_ID, LARK_APP_SECRET)"
    assert fake.requests == []


async def test_an_unusable_domain_is_a_configuration_error() -> None:
    settings = Settings(
        lark=LarkSettings(app_id="cli_x", app_secret="s", domain="http://lark.example.com"), _env_file=None
    )

    with pytest.raises(ApplicationError) as caught:
        await deliver(settings, text("hi"))

    assert (caught.value.type, caught.value.non_retryable) == ("LarkNotConfigured", True)
    assert "LARK_DOMAIN is not usable" in caught.value.message


@pytest.mark.parametrize(
    ("message", "missing"),
    [
        (OutboundMessage(channel="lark", chat_id=CHAT, kind="text", text="  \n"), "`text`"),
        (OutboundMessage(channel="lark", chat_id=CHAT, kind="approval_card"), "`interaction`"),
        (OutboundMessage(channel="http", chat_id=CHAT, kind="text", text="hi"), "'http'"),
    ],
)
async def test_invalid_messages(fake: FakeLarkOpenApi, message: OutboundMessage, missing: str) -> None:
    with pytest.raises(ApplicationError) as caught:
        await deliver(settings_for(fake), message)

    assert (caught.value.type, caught.value.non_retryable) == ("InvalidOutboundMessage", True)
    assert missing in caught.value.message and fake.api_requests() == []


async def test_deliver_outside_an_activity_sends_once_per_key(fake: FakeLarkOpenApi) -> None:
    channel = LarkChannel(settings_for(fake))

    first = await asyncio.to_thread(channel.deliver, text("unsupported message type"), "unsupported/om_1")
    again = await asyncio.to_thread(channel.deliver, text("unsupported message type"), "unsupported/om_1")

    assert first == again and len(fake.sent()) == 1
