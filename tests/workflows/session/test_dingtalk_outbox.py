"""A DingTalk session tells its chat: the approval card, the card updated in place, the answer; and,
when nobody decides in time, 操作已取消（超时）."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest
from temporalio.testing import WorkflowEnvironment

from api.calls import sessions as session_calls
from contracts import InboundMessage, SessionConfig
from core.settings import DingTalkSettings, Settings
from tests.conftest import assert_eventually
from tests.fakes.dingtalk_open_api import Card, FakeDingTalk, dingtalk_open_api
from worker import build_worker

DELETE_CANCELLED = "DELETE FROM orders WHERE status = 'cancelled'"


@pytest.fixture
async def dingtalk() -> AsyncIterator[FakeDingTalk]:
    async with dingtalk_open_api() as fake:
        yield fake


def dingtalk_settings(settings: Settings, fake: FakeDingTalk) -> Settings:
    channel = DingTalkSettings(
        client_id=fake.client_id,
        client_secret=fake.client_secret,
        openapi_endpoint=fake.base_url,
        card_template_id="tpl",
    )
    return settings.model_copy(update={"dingtalk": channel})


async def test_a_timed_out_request_is_cancelled_in_the_chat(
    time_env: WorkflowEnvironment, settings: Settings, dingtalk: FakeDingTalk
) -> None:
    client = time_env.client
    group = f"cid{uuid.uuid4().hex[:10]}"
    config = SessionConfig(
        session_key=f"dingtalk:{group}",
        channel="dingtalk",
        chat_id=group,
        approve_by_requester=True,
        approval_timeout_seconds=300,
    )
    async with build_worker(client, dingtalk_settings(settings, dingtalk)):
        await session_calls.send_message(
            client,
            settings.temporal.task_queue,
            config,
            InboundMessage(channel="dingtalk", sender_id="alice", chat_id=group, content=DELETE_CANCELLED),
        )
        [card] = await assert_eventually(_cards(dingtalk), bool, what="the approval card")
        assert card.params["status"] == "pending" and card.params["expires_at"] != "none"

        await time_env.sleep(301)

        texts = await assert_eventually(
            _texts(dingtalk, group), lambda t: len(t) == 2, what="the cancellation notice and the answer"
        )
        assert texts == [
            "操作已取消（超时）/ Cancelled: nobody approved `tool_1` in time.",
            'I did not run sql: denied by system:timeout (the approval request timed out) — "no decision within 0:05:00".',
        ]
        assert card.params["status"] == "timed_out" and "操作已取消（超时）" in card.params["status_text"]
        assert len(card.updates) == 1, "the card, updated once"


def _cards(fake: FakeDingTalk) -> Callable[[], Awaitable[list[Card]]]:
    async def cards() -> list[Card]:
        return list(fake.cards.values())

    return cards


def _texts(fake: FakeDingTalk, group: str) -> Callable[[], Awaitable[list[str]]]:
    async def texts() -> list[str]:
        return fake.texts(conversation=group)

    return texts
