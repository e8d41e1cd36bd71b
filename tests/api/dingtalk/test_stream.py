"""DingTalk in Stream mode, end to end: the real `dingtalk-stream` client of the real app (uvicorn),
a real worker and dev server; DingTalk's gateway and OpenAPI are the loopback stand-in."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
import pytest
from temporalio.client import Client

from api.chat.conversations import Conversations
from api.main import create_app
from contracts import DeliveryFailed, TaskChunkType
from core.settings import Settings
from tests.api.test_sessions import DELETE_CANCELLED, is_type
from tests.conftest import assert_eventually
from tests.fakes.dingtalk_open_api import CARD_TOPIC, MESSAGE_TOPIC, Card, FakeDingTalk
from tests.support import collect_events, event_of, serve

from .chat import card_for, new_group, press, say, status_of, texts, user_messages
from .conftest import ADMIN, ALICE, TEMPLATE

DONE = "DELETE done: 3 rows affected."


async def test_a_message_the_card_the_requester_s_click_and_the_result(
    http: httpx.AsyncClient, dingtalk: FakeDingTalk, count_orders: Callable[[str], int]
) -> None:
    group, key = new_group()
    await say(dingtalk, group, DELETE_CANCELLED)
    card = await card_for(dingtalk)
    assert (card.template_id, card.callback_type) == (TEMPLATE, "STREAM")
    assert card.open_space_id == f"dtv1.card//IM_GROUP.{group}"
    assert card.params["arguments"] == DELETE_CANCELLED and card.params["status"] == "pending"
    assert card.params["approvers"] == f"{ALICE}, {ADMIN}"
    assert count_orders("status = 'cancelled'") == 3

    await press(dingtalk, card, ALICE, "approve")

    params = await status_of(dingtalk, card, "approved")
    assert (params["decided_by"], params["buttons"]) == (ALICE, "false")
    assert "3 rows" in params["result"]
    assert await texts(dingtalk, lambda t: DONE in t, conversation=group) == [DONE]
    assert count_orders("status = 'cancelled'") == 0
    audit = (await http.get(f"/sessions/{key}/audit")).json()["entries"]
    assert [(e["kind"], e["principal"], e["channel"]) for e in audit if e["kind"] == "approved"] == [
        ("approved", ALICE, "dingtalk")
    ]
    assert dingtalk.texts(user=ALICE) == [], "the clicker was not told anything privately"


async def test_the_session_is_the_conversation_and_its_sender(
    http: httpx.AsyncClient, dingtalk: FakeDingTalk
) -> None:
    group, key = new_group()
    await say(dingtalk, group, "hello synapse")

    [message] = await user_messages(http, key)
    assert (message["content"], message["name"]) == ("hello synapse", ALICE)
    session = (await http.get(f"/sessions/{key}")).json()
    assert (session["channel"], session["approvers"]) == ("dingtalk", [ADMIN])


async def test_group_messages_count_only_when_they_mention_the_bot(
    http: httpx.AsyncClient, dingtalk: FakeDingTalk
) -> None:
    group, key = new_group()
    await say(dingtalk, group, "just chatting", mentioned=False)
    await say(dingtalk, group, "what is pending?")

    [message] = await user_messages(http, key)
    assert message["content"] == "what is pending?"


async def test_a_one_on_one_chat_is_answered_there(http: httpx.AsyncClient, dingtalk: FakeDingTalk) -> None:
    await say(dingtalk, "cidAliceDm", "an image", group=False, msgtype="picture")

    assert await texts(dingtalk, bool, user=ALICE) == ["I can only read text messages for now."]
    assert (await http.get("/sessions/dingtalk:cidAliceDm")).status_code == 404


async def test_a_non_approver_s_click_is_refused_and_told_to_them_alone(
    http: httpx.AsyncClient, dingtalk: FakeDingTalk, count_orders: Callable[[str], int]
) -> None:
    group, _ = new_group()
    await say(dingtalk, group, DELETE_CANCELLED)
    card = await card_for(dingtalk)

    await press(dingtalk, card, "mallory", "approve")

    [notice] = await texts(dingtalk, bool, user="mallory")
    assert notice.startswith("Not allowed:") and card.params["interaction_id"] in notice
    assert dingtalk.cards[card.out_track_id].params["status"] == "pending"
    assert count_orders("status = 'cancelled'") == 3
    await press(dingtalk, card, ADMIN, "deny")
    params = await status_of(dingtalk, card, "denied")
    assert params["decided_by"] == ADMIN
    assert count_orders("status = 'cancelled'") == 3


@pytest.mark.parametrize(
    ("reply", "status", "left"),
    [
        ("确认", "approved", 0),
        ("confirm", "approved", 0),
        ("取消", "denied", 3),
        ("maybe, not sure", "denied", 3),
    ],
)
async def test_chat_replies_decide_and_an_ambiguous_one_denies(
    http: httpx.AsyncClient,
    dingtalk: FakeDingTalk,
    count_orders: Callable[[str], int],
    reply: str,
    status: str,
    left: int,
) -> None:
    group, _ = new_group()
    await say(dingtalk, group, DELETE_CANCELLED)
    card = await card_for(dingtalk)

    await say(dingtalk, group, reply)

    params = await status_of(dingtalk, card, status)
    assert params["decided_by"] == ALICE
    assert count_orders("status = 'cancelled'") == left


async def test_a_redelivered_frame_is_taken_once_also_by_a_restarted_api(
    client: Client,
    settings: Settings,
    http: httpx.AsyncClient,
    dingtalk: FakeDingTalk,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A click is not deduplicated by the session (a refusal is told each time), so this shows the
    channel's own dedupe: durable, and shared with another API process on the same data dir."""
    caplog.set_level(logging.INFO, logger="api.dingtalk.inbound")
    group, _ = new_group()
    await say(dingtalk, group, DELETE_CANCELLED)
    card = await card_for(dingtalk)
    frame = await press(dingtalk, card, "mallory", "approve")
    await texts(dingtalk, lambda t: len(t) == 1, user="mallory")
    click = dingtalk.card_click(card.out_track_id, "mallory", {**_params(card), "action": "approve"})

    await dingtalk.ack(await dingtalk.push(CARD_TOPIC, click, frame_id=frame))
    await _skipped(caplog, 1)
    async with serve(create_app(settings, client=client)):  # a second API process, on the same data dir
        await assert_eventually(_connections(dingtalk), lambda n: n == 2, what="the second API connected")
        again = await dingtalk.push(CARD_TOPIC, click, frame_id=frame)
        assert (await dingtalk.ack(again))["code"] == 200, "a redelivery is acked too, so DingTalk stops"
        await _skipped(caplog, 2)

    [notice] = dingtalk.texts(user="mallory")
    assert notice.startswith("Not allowed:")


async def _skipped(caplog: pytest.LogCaptureFixture, count: int) -> None:
    async def skips() -> int:
        return sum("already taken; skipped" in r.getMessage() for r in caplog.records)

    await assert_eventually(skips, lambda n: n == count, what=f"{count} redelivery(ies) skipped")


def _params(card: Card) -> dict[str, str]:
    return {name: card.params[name] for name in ("interaction_id", "session_key", "workflow_id")}


def _connections(fake: FakeDingTalk) -> Callable[[], Awaitable[int]]:
    async def count() -> int:
        return fake.connections

    return count


async def test_two_conversations_decide_independently(
    http: httpx.AsyncClient, dingtalk: FakeDingTalk, count_orders: Callable[[str], int]
) -> None:
    team_a, key_a = new_group()
    team_b, key_b = new_group()
    await say(dingtalk, team_a, DELETE_CANCELLED)
    first = await card_for(dingtalk)
    await say(dingtalk, team_b, DELETE_CANCELLED, sender="bob")
    second = await card_for(dingtalk, 2)
    assert {first.params["session_key"], second.params["session_key"]} == {key_a, key_b}

    await press(dingtalk, second, "bob", "deny")
    await status_of(dingtalk, second, "denied")
    assert dingtalk.cards[first.out_track_id].params["status"] == "pending"
    await press(dingtalk, first, ALICE, "approve")

    await status_of(dingtalk, first, "approved")
    assert count_orders("status = 'cancelled'") == 0
    assert await texts(dingtalk, lambda t: DONE in t, conversation=team_a) == [DONE]


async def test_a_slow_temporal_never_holds_an_ack(
    http: httpx.AsyncClient, dingtalk: FakeDingTalk, monkeypatch: pytest.MonkeyPatch
) -> None:
    group, key = new_group()
    released = asyncio.Event()
    receive = Conversations.receive

    async def slow(self: Conversations, *args: Any) -> None:
        await released.wait()
        await receive(self, *args)

    monkeypatch.setattr(Conversations, "receive", slow)
    await say(dingtalk, group, "are you there?")  # acked while the delivery still waits

    released.set()
    [message] = await user_messages(http, key)
    assert message["content"] == "are you there?"


async def test_the_connection_is_reopened_after_a_drop_and_shown_in_healthz(
    http: httpx.AsyncClient, dingtalk: FakeDingTalk
) -> None:
    group, key = new_group()

    async def channel() -> dict[str, Any]:
        health: dict[str, Any] = (await http.get("/healthz")).json()
        return dict(health["channels"]["dingtalk"])

    opened = await assert_eventually(channel, lambda c: c["state"] == "open", what="the connection open")
    assert (opened["mode"], opened["connections_opened"]) == ("stream", 1)
    assert {s["topic"] for s in dingtalk.opened[0]["subscriptions"]} == {
        MESSAGE_TOPIC,
        "/v1.0/card/instances/callback",
    }

    await dingtalk.drop()

    reopened = await assert_eventually(
        channel,
        lambda c: c["state"] == "open" and c["connections_opened"] == 2,
        what="the connection reopened",
    )
    assert reopened["last_error"]
    await say(dingtalk, group, "still there?")
    [message] = await user_messages(http, key)
    assert message["content"] == "still there?"


async def test_bot_messages_do_not_come_over_http_in_stream_mode(
    http: httpx.AsyncClient, dingtalk: FakeDingTalk
) -> None:
    answer = await http.post("/channels/dingtalk/events", json=dingtalk.bot_message("hi"))

    assert answer.status_code == 404 and "arrive over Stream" in answer.json()["detail"]


async def test_a_refused_card_is_not_retried_and_shows_in_the_session(
    http: httpx.AsyncClient, dingtalk: FakeDingTalk, count_orders: Callable[[str], int]
) -> None:
    dingtalk.fail_next(403, "Forbidden.AccessDenied.AccessTokenPermissionDenied", path_prefix="/v1.0/card/")
    group, key = new_group()
    await say(dingtalk, group, DELETE_CANCELLED)
    await user_messages(http, key)

    error = (await collect_events(http, key, is_type(TaskChunkType.ERROR)))[-1]

    failed = event_of(error, DeliveryFailed)
    assert (failed.via, failed.what, failed.to) == ("chat", "approval_card", "dingtalk")
    assert "Forbidden.AccessDenied.AccessTokenPermissionDenied" in failed.reason
    assert [c.path for c in dingtalk.calls].count("/v1.0/card/instances/createAndDeliver") == 1, "not retried"
    assert dingtalk.cards == {}
    await say(dingtalk, group, "确认")  # the request still waits, and a reply decides it
    await assert_eventually(_left(count_orders), lambda n: n == 0, what="the DELETE")


def _left(count_orders: Callable[[str], int]) -> Callable[[], Awaitable[int]]:
    async def left() -> int:
        return count_orders("status = 'cancelled'")

    return left


async def test_a_reply_dingtalk_refuses_for_now_is_sent_again(
    http: httpx.AsyncClient, dingtalk: FakeDingTalk
) -> None:
    dingtalk.fail_next(503, "ServiceUnavailable")

    await say(dingtalk, "cidBobDm", "a sticker", sender="bob", group=False, msgtype="picture")

    assert await texts(dingtalk, bool, user="bob") == ["I can only read text messages for now."]
    sends = [c for c in dingtalk.calls if c.path == "/v1.0/robot/oToMessages/batchSend"]
    assert len(sends) == 2, "refused once, sent the second time"
