"""What people do in DingTalk, through the stand-in's Stream connection: write to the bot, press buttons."""

from __future__ import annotations

import uuid
from typing import Any

import httpx

from api.dingtalk.messages import session_key_for
from tests.conftest import assert_eventually
from tests.fakes.dingtalk_open_api import CARD_TOPIC, MESSAGE_TOPIC, Card, FakeDingTalk

from .conftest import ALICE


def new_group() -> tuple[str, str]:
    """A new group's openConversationId (in DingTalk's Base64 alphabet) and its session key."""
    conversation = f"cid{uuid.uuid4().hex[:12]}+7/x=="
    return conversation, session_key_for(conversation)


async def say(
    fake: FakeDingTalk, conversation: str, text: str, *, sender: str = ALICE, **options: Any
) -> dict[str, Any]:
    """`sender` writes `text` to the bot in `conversation`; the message, once DingTalk has its ack."""
    message = fake.bot_message(text, conversation=conversation, sender=sender, **options)
    frame = await fake.push(MESSAGE_TOPIC, message)
    ack = await fake.ack(frame)
    assert ack["code"] == 200, ack
    return message


async def card_for(fake: FakeDingTalk, count: int = 1) -> Card:
    """The `count`-th approval card the bot sent (waits for it)."""

    async def cards() -> list[Card]:
        return list(fake.cards.values())

    found = await assert_eventually(cards, lambda c: len(c) >= count, what=f"{count} approval card(s)")
    return found[count - 1]


async def press(fake: FakeDingTalk, card: Card, user: str, action: str) -> str:
    """`user` presses a button of `card`, its params filled from the card's variables; the frame id."""
    params = {
        "action": action,
        "interaction_id": card.params["interaction_id"],
        "session_key": card.params["session_key"],
        "workflow_id": card.params["workflow_id"],
    }
    frame = await fake.push(CARD_TOPIC, fake.card_click(card.out_track_id, user, params))
    ack = await fake.ack(frame)
    assert ack["code"] == 200, ack
    return frame


async def status_of(fake: FakeDingTalk, card: Card, status: str) -> dict[str, str]:
    """The card's variables once its `status` is `status`."""

    async def params() -> dict[str, str]:
        return dict(fake.cards[card.out_track_id].params)

    return await assert_eventually(params, lambda p: p["status"] == status, what=f"the card {status}")


async def texts(
    fake: FakeDingTalk, check: Any, *, conversation: str | None = None, user: str | None = None
) -> list[str]:
    """The bot's texts to a group (or a person) once `check(texts)` holds."""

    async def probe() -> list[str]:
        return fake.texts(conversation=conversation, user=user)

    return await assert_eventually(probe, check, what="the bot's texts")


async def user_messages(http: httpx.AsyncClient, key: str, count: int = 1) -> list[dict[str, Any]]:
    """The session's user messages once there are `count`."""

    async def probe() -> list[dict[str, Any]]:
        session = await http.get(f"/sessions/{key}")
        return (
            [m for m in session.json()["messages"] if m["role"] == "user"]
            if session.status_code == 200
            else []
        )

    return await assert_eventually(probe, lambda found: len(found) >= count, what=f"{count} user message(s)")
