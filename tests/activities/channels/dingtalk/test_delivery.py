"""`deliver_message` to DingTalk through the real `alibabacloud-dingtalk` SDK against the loopback stand-in."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from temporalio.exceptions import ApplicationError

from activities.channels.dingtalk.cards import STATUSES, TEXT_LIMIT
from contracts import (
    GrantScope,
    InteractionOutcome,
    InteractionRequest,
    OutboundMessage,
    ToolApprovalAsk,
    content_of,
)
from core.settings import DingTalkSettings, Settings
from tests.activities.channels.delivering import deliver, environment
from tests.fakes.dingtalk_open_api import FakeDingTalk, dingtalk_open_api
from tests.support import free_port

GROUP = "cidGroupA+1/2=="
TEMPLATE = "tpl-approval.schema"
DELETE = "DELETE FROM orders\nWHERE status = 'cancelled'"
ASKED_AT = datetime(2026, 11, 26, 10, 0, tzinfo=UTC)
REQUIRED_VARIABLES = {
    "interaction_id",
    "session_key",
    "tool_name",
    "arguments",
    "reason",
    "approvers",
    "expires_at",
    "status",
}


@pytest.fixture
async def fake() -> AsyncIterator[FakeDingTalk]:
    async with dingtalk_open_api() as server:
        yield server


def settings_for(fake: FakeDingTalk, **overrides: Any) -> Settings:
    values = {
        "client_id": fake.client_id,
        "client_secret": fake.client_secret,
        "openapi_endpoint": fake.base_url,
        "card_template_id": TEMPLATE,
    }
    return Settings(dingtalk=DingTalkSettings(**{**values, **overrides}), _env_file=None)


def text(body: str, chat_id: str = GROUP, mentions: list[str] | None = None) -> OutboundMessage:
    return OutboundMessage(
        channel="dingtalk", chat_id=chat_id, kind="text", text=body, mentions=mentions or []
    )


def request(grants: list[str] | None = None) -> InteractionRequest:
    ask = ToolApprovalAsk(
        tool="sql",
        arguments={"sql": DELETE},
        summary="sql: DELETE FROM orders",
        reason="DELETE changes data",
        grants=[GrantScope(scope) for scope in grants or []],
    )
    return InteractionRequest(
        interaction_id="tool_1",
        interaction_type="tool_approval",
        workflow_id="session:dingtalk:cidGroupA-1_2",
        content=content_of(ask),
        ask=ask,
        approvers=["alice", "boss"],
        requested_by="alice",
        timestamp=ASKED_AT,
        expires_at=ASKED_AT + timedelta(minutes=5),
    )


def card(kind: str = "approval_card", **fields: Any) -> OutboundMessage:
    return OutboundMessage(
        channel="dingtalk",
        chat_id=GROUP,
        kind=kind,
        interaction=request(),
        session_key="dingtalk:cidGroupA-1_2",
        **fields,
    )


async def test_a_text_goes_to_the_group_as_the_bot_with_one_token(fake: FakeDingTalk) -> None:
    settings = settings_for(fake)

    first = await deliver(settings, text("3 rows deleted", mentions=["boss"]))
    await deliver(settings, text("done"))

    assert [(s.msg_key, s.conversation, s.robot_code) for s in fake.sent] == [
        ("sampleText", GROUP, fake.client_id),
        ("sampleText", GROUP, fake.client_id),
    ]
    assert fake.texts(conversation=GROUP) == ["3 rows deleted @boss", "done"]
    assert first.message_id and first.parts == 1
    assert [c.path for c in fake.calls].count("/v1.0/oauth2/accessToken") == 1


async def test_a_one_on_one_chat_is_addressed_by_user_id(fake: FakeDingTalk) -> None:
    await deliver(settings_for(fake), text("hello", chat_id="user:alice"))

    assert [(s.users, s.conversation) for s in fake.sent] == [(("alice",), None)]
    assert fake.texts(user="alice") == ["hello"]


async def test_a_long_text_is_split_on_lines(fake: FakeDingTalk) -> None:
    lines = [f"row {n}: " + "x" * 90 for n in range(80)]

    delivery = await deliver(settings_for(fake), text("\n".join(lines)))

    parts = fake.texts(conversation=GROUP)
    assert delivery.parts == len(parts) > 1
    assert all(len(part) <= TEXT_LIMIT for part in parts)
    assert "\n".join(parts).split("\n") == lines


async def test_the_approval_card_is_a_stream_callback_card_of_the_template(fake: FakeDingTalk) -> None:
    delivery = await deliver(settings_for(fake), card())

    assert delivery.message_id in fake.cards
    sent = fake.cards[delivery.message_id]
    assert (sent.template_id, sent.callback_type, sent.robot_code) == (TEMPLATE, "STREAM", fake.client_id)
    assert sent.open_space_id == f"dtv1.card//IM_GROUP.{GROUP}"
    assert REQUIRED_VARIABLES <= set(sent.params)
    assert sent.params["arguments"] == DELETE
    assert sent.params["status"] == "pending"
    assert sent.params["approvers"] == "alice, boss"
    assert sent.params["expires_at"] == "2026-11-26 10:05:00 UTC"
    assert (sent.params["session_key"], sent.params["workflow_id"]) == (
        "dingtalk:cidGroupA-1_2",
        "session:dingtalk:cidGroupA-1_2",
    )


async def test_a_retried_card_delivery_is_the_same_card(fake: FakeDingTalk) -> None:
    settings = settings_for(fake)
    env = environment()
    fake.fail_next(503, "ServiceUnavailable", path_prefix="/v1.0/card/")

    with pytest.raises(ApplicationError) as caught:
        await deliver(settings, card(), env)
    again = await deliver(settings, card(), env)

    assert (caught.value.type, caught.value.non_retryable) == ("DingTalkUnavailable", False)
    assert list(fake.cards) == [again.message_id]


async def test_a_decision_updates_the_card_in_place(fake: FakeDingTalk) -> None:
    settings = settings_for(fake)
    sent = await deliver(settings, card())
    outcome = InteractionOutcome(
        interaction_id="tool_1",
        approved=True,
        decided_by="boss",
        channel="dingtalk",
        decided_at=ASKED_AT + timedelta(minutes=1),
        tool_result={"ok": True, "tool_id": "sql", "content": {"rowcount": 3}},
    )

    updated = await deliver(settings, card("card_update", outcome=outcome, card_message_id=sent.message_id))

    assert updated.message_id == sent.message_id and len(fake.cards) == 1
    params = fake.cards[sent.message_id or ""].params
    assert (params["status"], params["decided_by"], params["decided_at"]) == (
        "approved",
        "boss",
        "2026-11-26 10:01:00 UTC",
    )
    assert params["buttons"] == "false" and params["result"]
    assert params["status"] in STATUSES


async def test_a_timed_out_request_says_so_on_the_card(fake: FakeDingTalk) -> None:
    settings = settings_for(fake)
    sent = await deliver(settings, card())
    outcome = InteractionOutcome(
        interaction_id="tool_1",
        approved=False,
        decided_by="system:timeout",
        channel="system",
        decided_at=ASKED_AT + timedelta(minutes=5),
    )

    await deliver(settings, card("card_update", outcome=outcome, card_message_id=sent.message_id))

    params = fake.cards[sent.message_id or ""].params
    assert params["status"] == "timed_out"
    assert "操作已取消（超时）" in params["status_text"]


async def test_without_a_template_the_request_goes_as_markdown_with_the_reply_hint(
    fake: FakeDingTalk,
) -> None:
    await deliver(settings_for(fake, card_template_id=None), card())

    assert fake.cards == {}
    [markdown] = fake.sent
    assert markdown.msg_key == "sampleMarkdown"
    assert DELETE in markdown.text and "确认" in markdown.text and "tool_1" in markdown.text


@pytest.mark.parametrize(
    ("status", "code"), [(429, "Forbidden.AccessDenied.QpsLimitForApi"), (500, "SystemError")]
)
async def test_rate_limits_and_server_errors_are_retried(fake: FakeDingTalk, status: int, code: str) -> None:
    fake.fail_next(status, code)

    with pytest.raises(ApplicationError) as caught:
        await deliver(settings_for(fake), text("hi"))

    assert (caught.value.type, caught.value.non_retryable) == ("DingTalkUnavailable", False)
    assert code in caught.value.message and fake.sent == []


async def test_refused_credentials_are_not_retried_and_never_show_the_secret(fake: FakeDingTalk) -> None:
    settings = settings_for(fake, client_secret="wrong-secret-value")

    with pytest.raises(ApplicationError) as caught:
        await deliver(settings, text("hi"))

    assert (caught.value.type, caught.value.non_retryable) == ("DingTalkAuthError", True)
    assert (
        "invalidClientIdOrSecret" in caught.value.message and "DINGTALK_CLIENT_SECRET" in caught.value.message
    )
    assert "wrong-secret-value" not in caught.value.message


async def test_a_revoked_token_is_replaced_once(fake: FakeDingTalk) -> None:
    settings = settings_for(fake)
    await deliver(settings, text("one"))
    fake.revoke_tokens()

    await deliver(settings, text("two"))

    assert fake.texts(conversation=GROUP) == ["one", "two"]
    assert [c.path for c in fake.calls].count("/v1.0/oauth2/accessToken") == 2


async def test_an_unknown_card_is_a_refusal(fake: FakeDingTalk) -> None:
    outcome = InteractionOutcome(
        interaction_id="tool_1", approved=False, decided_by="boss", channel="dingtalk", decided_at=ASKED_AT
    )

    with pytest.raises(ApplicationError) as caught:
        await deliver(
            settings_for(fake), card("card_update", outcome=outcome, card_message_id="synapse-gone")
        )

    assert (caught.value.type, caught.value.non_retryable) == ("DingTalkRejected", True)
    assert "param.cardNotExist" in caught.value.message


async def test_no_answer_is_retried(fake: FakeDingTalk) -> None:
    settings = settings_for(fake, openapi_endpoint=f"http://127.0.0.1:{free_port()}")

    with pytest.raises(ApplicationError) as caught:
        await deliver(settings, text("hi"))

    assert (caught.value.type, caught.value.non_retryable) == ("DingTalkUnavailable", False)


@pytest.mark.parametrize(
    ("settings", "message", "kind", "named"),
    [
        (Settings(_env_file=None), text("hi"), "DingTalkNotConfigured", "DINGTALK_CLIENT_ID"),
        (None, text("  \n"), "InvalidOutboundMessage", "`text`"),
        (
            None,
            OutboundMessage(channel="dingtalk", chat_id=GROUP, kind="approval_card"),
            "InvalidOutboundMessage",
            "`interaction`",
        ),
    ],
)
async def test_what_cannot_be_sent_is_named(
    fake: FakeDingTalk, settings: Settings | None, message: OutboundMessage, kind: str, named: str
) -> None:
    with pytest.raises(ApplicationError) as caught:
        await deliver(settings or settings_for(fake), message)

    assert (caught.value.type, caught.value.non_retryable) == (kind, True)
    assert named in caught.value.message and fake.sent == []
