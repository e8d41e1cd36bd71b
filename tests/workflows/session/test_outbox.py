"""A Lark session tells its chat: the approval card, its update with the decision, the answer."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator, Callable

import pytest
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from api.calls import sessions as session_calls
from contracts import InboundMessage, SessionConfig
from core.settings import LarkSettings, Settings
from tests.conftest import assert_eventually
from tests.fakes.lark_open_api import CardUpdate, FakeLarkOpenApi, FakeMessage, lark_open_api
from worker import build_worker
from workflows.identity.ids import session_workflow_id
from workflows.session import SessionWorkflow

from ...decisions import decided

DELETE_CANCELLED = "DELETE FROM orders WHERE status = 'cancelled'"


@pytest.fixture
async def lark() -> AsyncIterator[FakeLarkOpenApi]:
    async with lark_open_api() as fake:
        yield fake


def lark_settings(settings: Settings, fake: FakeLarkOpenApi) -> Settings:
    lark = LarkSettings(app_id=fake.app_id, app_secret=fake.app_secret, domain=fake.base_url)
    return settings.model_copy(update={"lark": lark})


def lark_config(chat_id: str, **extra: object) -> SessionConfig:
    return SessionConfig(
        session_key=f"lark:{chat_id}",
        channel="lark",
        chat_id=chat_id,
        approve_by_requester=True,
        **extra,
    )


def card_text(content: dict[str, object]) -> str:
    return json.dumps(content, ensure_ascii=False)


async def test_the_chat_gets_the_card_its_decision_and_the_answer(
    client: Client, settings: Settings, lark: FakeLarkOpenApi, count_orders: Callable[[str], int]
) -> None:
    chat = f"oc_{uuid.uuid4().hex[:10]}"
    config = lark_config(chat)
    async with build_worker(client, lark_settings(settings, lark)):
        await session_calls.send_message(
            client,
            settings.temporal.task_queue,
            config,
            InboundMessage(channel="lark", sender_id="ou_alice", chat_id=chat, content=DELETE_CANCELLED),
        )
        cards = await assert_eventually(
            lambda: _sent(lark),
            lambda sent: any(m.msg_type == "interactive" for m in sent),
            what="the approval card",
        )
        card = next(m for m in cards if m.msg_type == "interactive")
        assert card.chat_id == chat
        assert DELETE_CANCELLED in card_text(card.content) and "ou_alice" in card_text(card.content)
        handle = client.get_workflow_handle(session_workflow_id(config.session_key))
        pending = await handle.query(SessionWorkflow.get_status)
        assert pending.pending_interactions[0].approvers == ["ou_alice"], "the requester may approve"

        outcome = await handle.execute_update(
            SessionWorkflow.decide_checked,
            decided(interaction_id="tool_1", approved=True, principal="ou_alice", channel="lark"),
        )
        assert outcome.tool_result is not None and outcome.tool_result.content["rowcount"] == 3
        updates = await assert_eventually(lambda: _updates(lark), bool, what="the card update")
        assert updates[0].message_id == card.message_id
        assert "Approved" in card_text(updates[0].content) and "3 rows" in card_text(updates[0].content)
        texts = await assert_eventually(lambda: _texts(lark), bool, what="the answer in the chat")
        assert texts == ["DELETE done: 3 rows affected."], "the chat gets the answer, once"
        assert [m.msg_type for m in lark.sent()] == ["interactive", "text"], "one card, one answer"
        assert [u.message_id for u in lark.card_updates()] == [card.message_id], "the card, updated once"
    assert count_orders("status = 'cancelled'") == 0


async def test_a_timed_out_request_is_cancelled_in_the_chat(
    time_env: WorkflowEnvironment, settings: Settings, lark: FakeLarkOpenApi
) -> None:
    client = time_env.client
    chat = f"oc_{uuid.uuid4().hex[:10]}"
    config = lark_config(chat, approval_timeout_seconds=300)
    async with build_worker(client, lark_settings(settings, lark)):
        await session_calls.send_message(
            client,
            settings.temporal.task_queue,
            config,
            InboundMessage(channel="lark", sender_id="ou_alice", chat_id=chat, content=DELETE_CANCELLED),
        )
        await assert_eventually(
            lambda: _sent(lark), lambda sent: any(m.msg_type == "interactive" for m in sent)
        )
        await time_env.sleep(301)
        updates = await assert_eventually(lambda: _updates(lark), bool, what="the card update")
        assert [u.content["header"]["title"]["content"] for u in updates] == ["Timed out — cancelled: sql"]
        texts = await assert_eventually(
            lambda: _texts(lark), lambda t: len(t) == 2, what="the cancellation notice and the answer"
        )
        assert texts == [
            "操作已取消（超时）/ Cancelled: nobody approved `tool_1` in time.",
            'I did not run sql: denied by system:timeout (the approval request timed out) — "no decision within 0:05:00".',
        ]


async def _sent(fake: FakeLarkOpenApi) -> list[FakeMessage]:
    return fake.sent()


async def _updates(fake: FakeLarkOpenApi) -> list[CardUpdate]:
    return fake.card_updates()


async def _texts(fake: FakeLarkOpenApi) -> list[str]:
    return [str(m.content.get("text", "")) for m in fake.sent() if m.msg_type == "text"]
