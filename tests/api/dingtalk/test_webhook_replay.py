"""DingTalk webhook mode against replays: DingTalk's signature covers `"<timestamp>\\n<secret>"`, not
the body, so a captured `timestamp` + `sign` pair is accepted once (durably) and only while fresh."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import HTTPException
from temporalio.client import Client

from api.chat.seen import KEPT_SECONDS, SeenEvents
from api.dingtalk.webhook import MAX_AGE_SECONDS, authenticate, signature
from api.main import create_app
from core.settings import Settings
from tests.conftest import assert_eventually
from tests.fakes.dingtalk_open_api import FakeDingTalk

from ...support import serve
from ..test_sessions import DELETE_CANCELLED
from .chat import card_for, new_group, status_of, user_messages
from .conftest import ADMIN, ALICE, dingtalk_settings

EVENTS = "/channels/dingtalk/events"
SENT_MS = 1_700_000_000_000
SENT = SENT_MS / 1000
SECRET = "s3cret"


def signed(secret: str, at: float) -> dict[str, str]:
    """The headers DingTalk sends with a request signed at `at` (seconds since 1970)."""
    timestamp = str(int(at * 1000))
    return {"timestamp": timestamp, "sign": signature(timestamp, secret)}


@pytest.fixture
def settings(tmp_path: Path, task_queue: str, dingtalk: FakeDingTalk) -> Settings:
    """This module's app runs in webhook mode."""
    return dingtalk_settings(tmp_path, task_queue, dingtalk, mode="webhook")


# ---------------------------------------------------------------- the window (pure)


@pytest.mark.parametrize("offset", [0.0, 240.0, 300.0, -300.0])
def test_a_request_signed_within_five_minutes_either_way_is_accepted(offset: float) -> None:
    headers = {"timestamp": str(SENT_MS), "sign": signature(str(SENT_MS), SECRET)}

    assert authenticate(b'{"msgId": "m1"}', headers, SECRET, now=SENT + offset) == {"msgId": "m1"}


@pytest.mark.parametrize("offset", [300.001, -300.001, 360.0, 3599.0])
def test_a_request_signed_over_five_minutes_away_is_refused(offset: float) -> None:
    headers = {"timestamp": str(SENT_MS), "sign": signature(str(SENT_MS), SECRET)}

    with pytest.raises(HTTPException) as refused:
        authenticate(b"{}", headers, SECRET, now=SENT + offset)

    assert refused.value.status_code == 401
    assert "at most 300 s is accepted" in str(refused.value.detail)


def test_used_pairs_are_kept_longer_than_they_stay_fresh() -> None:
    assert MAX_AGE_SECONDS == 300 and KEPT_SECONDS >= MAX_AGE_SECONDS


# ---------------------------------------------------------------- through the app


async def audit_kinds(http: httpx.AsyncClient, key: str) -> list[tuple[str, str]]:
    entries: list[dict[str, Any]] = (await http.get(f"/sessions/{key}/audit")).json()["entries"]
    return [(e["kind"], e["principal"]) for e in entries]


async def test_a_replayed_signature_carrying_an_admins_confirmation_approves_nothing(
    http: httpx.AsyncClient, dingtalk: FakeDingTalk, count_orders: Callable[[str], int]
) -> None:
    group, key = new_group()
    captured = signed(dingtalk.client_secret, time.time() - 60)
    ask = dingtalk.bot_message(DELETE_CANCELLED, conversation=group, sender=ALICE)
    assert (await http.post(EVENTS, json=ask, headers=captured)).status_code == 200
    card = await card_for(dingtalk)
    pending = card.params["interaction_id"]

    confirm = dingtalk.bot_message("确认", conversation=group, sender=ADMIN)
    replay = await http.post(EVENTS, json=confirm, headers=captured)

    assert replay.status_code == 401
    detail = replay.json()["detail"]
    assert "already used" in detail and "replay" in detail and captured["timestamp"] in detail
    assert dingtalk.client_secret not in detail
    session = (await http.get(f"/sessions/{key}")).json()
    assert [p["interaction_id"] for p in session["pending_interactions"]] == [pending]
    assert count_orders("status = 'cancelled'") == 3, "the DELETE did not run"
    assert dingtalk.cards[card.out_track_id].params["status"] == "pending"
    assert [kind for kind, _ in await audit_kinds(http, key)] == ["requested"]
    assert dingtalk.texts(conversation=group) == [], "the session did not answer: it never heard it"

    # The same words over a freshly signed pair are heard: what was refused was the pair, not the
    # message. The admin's 确认 carries their role (an approver, by DINGTALK_ADMINS) and approves.
    heard = dingtalk.bot_message("确认", conversation=group, sender=ADMIN)
    fresh = await http.post(EVENTS, json=heard, headers=signed(dingtalk.client_secret, time.time()))
    assert fresh.status_code == 200

    await status_of(dingtalk, card, "approved")

    async def cancelled_orders() -> int:
        return count_orders("status = 'cancelled'")

    await assert_eventually(cancelled_orders, lambda n: n == 0, what="the DELETE, approved by the admin")
    assert await audit_kinds(http, key) == [("requested", ALICE), ("approved", ADMIN)]


async def test_a_used_pair_stays_refused_after_the_api_is_rebuilt_on_the_same_data_dir(
    client: Client, settings: Settings, worker: None, dingtalk: FakeDingTalk
) -> None:
    first, first_key = new_group()
    captured = signed(dingtalk.client_secret, time.time() - 30)
    async with serve(create_app(settings, client=client)) as http:
        message = dingtalk.bot_message("hello", conversation=first, sender=ALICE)
        assert (await http.post(EVENTS, json=message, headers=captured)).status_code == 200
        await user_messages(http, first_key)
    pair = f"sign:{captured['timestamp']}:{captured['sign']}"
    assert SeenEvents(settings.data_dir).taken_now("dingtalk", pair), "kept in the data dir's channels.db"

    second, second_key = new_group()
    async with serve(create_app(settings, client=client)) as http:
        attack = dingtalk.bot_message("确认", conversation=second, sender=ADMIN)
        replay = await http.post(EVENTS, json=attack, headers=captured)

        assert replay.status_code == 401 and "already used" in replay.json()["detail"]
        assert (await http.get(f"/sessions/{second_key}")).status_code == 404
        again = await http.post(EVENTS, content=json.dumps(message), headers=captured)
        assert again.status_code == 401, "the very same request, redelivered, is refused too"
        assert [m["content"] for m in await user_messages(http, first_key)] == ["hello"]


@pytest.mark.parametrize(("age", "status"), [(6 * 60, 401), (-6 * 60, 401), (4 * 60, 200), (-4 * 60, 200)])
async def test_only_requests_signed_within_five_minutes_reach_a_session(
    http: httpx.AsyncClient, dingtalk: FakeDingTalk, age: int, status: int
) -> None:
    group, key = new_group()
    message = dingtalk.bot_message("hello", conversation=group, sender=ALICE)

    answer = await http.post(EVENTS, json=message, headers=signed(dingtalk.client_secret, time.time() - age))

    assert answer.status_code == status, answer.text
    if status == 401:
        assert "at most 300 s is accepted" in answer.json()["detail"]
        assert (await http.get(f"/sessions/{key}")).status_code == 404
    else:
        assert [m["content"] for m in await user_messages(http, key)] == ["hello"]


async def test_a_forged_sign_does_not_burn_the_genuine_pair(
    http: httpx.AsyncClient, dingtalk: FakeDingTalk, settings: Settings
) -> None:
    group, key = new_group()
    genuine = signed(dingtalk.client_secret, time.time() - 10)
    forged = {**genuine, "sign": signature(genuine["timestamp"], "a guessed secret")}
    attack = dingtalk.bot_message("确认", conversation=group, sender=ADMIN)

    refused = await http.post(EVENTS, json=attack, headers=forged)

    assert refused.status_code == 401 and "does not match" in refused.json()["detail"]
    assert not SeenEvents(settings.data_dir).taken_now(
        "dingtalk", f"sign:{forged['timestamp']}:{forged['sign']}"
    ), "a forged pair is not even recorded"
    message = dingtalk.bot_message("hello", conversation=group, sender=ALICE)
    assert (await http.post(EVENTS, json=message, headers=genuine)).status_code == 200
    assert [m["content"] for m in await user_messages(http, key)] == ["hello"]
    assert (await http.post(EVENTS, json=attack, headers=genuine)).status_code == 401
