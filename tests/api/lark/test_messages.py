"""Which Lark messages reach which session, with what text (pure rules, SDK event models)."""

from __future__ import annotations

from typing import Any

import pytest
from lark_oapi.api.im.v1 import P2ImMessageReceiveV1

from api.chat.conversations import ChatText, Ignored, Unsupported
from api.lark.messages import read_message, session_key_for
from tests.fakes.lark_events import BOT_OPEN_ID, LarkEvents, mention

LARK = LarkEvents(verification_token="vt", encrypt_key=None)
BOT = mention("@_user_1", BOT_OPEN_ID, "Synapse")
BOB = mention("@_user_2", "ou_bob", "Bob")


def read(payload: dict[str, Any], bot_open_id: str | None = None) -> ChatText | Unsupported | Ignored:
    return read_message(P2ImMessageReceiveV1(payload), bot_open_id)


def test_a_p2p_text_is_for_the_chat_session_with_its_ids() -> None:
    payload = LARK.text("oc_1", "ou_alice", "hello", message_id="om_1", event_id="ev_1")
    found = read(payload)
    assert isinstance(found, ChatText)
    assert found.session_key == "lark:oc_1" == session_key_for("oc_1")
    assert found.message.model_dump(exclude_none=True) == {
        "channel": "lark",
        "sender_id": "ou_alice",
        "chat_id": "oc_1",
        "content": "hello",
        "message_id": "om_1",
        "metadata": {"event_id": "ev_1", "chat_type": "p2p"},
        "origin": {"channel": "lark", "chat_id": "oc_1", "reply_to": "om_1"},
    }


def test_a_thread_message_is_for_the_thread_session() -> None:
    found = read(LARK.text("oc_1", "ou_alice", "hi", thread_id="omt_9"))
    assert isinstance(found, ChatText)
    assert found.session_key == "lark:oc_1:omt_9"
    assert found.message.metadata["thread_id"] == "omt_9"


@pytest.mark.parametrize(
    ("bot_open_id", "mentions", "text", "expected"),
    [
        (None, [BOT], "@_user_1 status?", "status?"),
        (None, [BOT, BOB], "@_user_1 ask @_user_2 first", "ask first"),  # unknown bot: every mention
        (BOT_OPEN_ID, [BOT, BOB], "@_user_1 ask @_user_2 first", "ask @Bob first"),
        (BOT_OPEN_ID, [BOT], "SELECT 1 @_user_1", "SELECT 1"),
    ],
)
def test_a_group_message_mentioning_the_bot_loses_the_mention(
    bot_open_id: str | None, mentions: list[dict[str, Any]], text: str, expected: str
) -> None:
    found = read(LARK.text("oc_g", "ou_alice", text, chat_type="group", mentions=mentions), bot_open_id)
    assert isinstance(found, ChatText)
    assert found.message.content == expected


def test_placeholders_are_replaced_longest_first() -> None:
    many = [mention(f"@_user_{n}", f"ou_{n}", f"P{n}") for n in range(1, 11)]
    found = read(
        LARK.text("oc_g", "ou_a", "@_user_10 and @_user_1", chat_type="group", mentions=many), "ou_1"
    )
    assert isinstance(found, ChatText)
    assert found.message.content == "@P10 and"


@pytest.mark.parametrize(
    ("payload", "bot_open_id", "reason"),
    [
        (LARK.text("oc_g", "ou_a", "hi all", chat_type="group"), None, "does not mention the bot"),
        (
            LARK.text("oc_g", "ou_a", "@_user_2 hi", chat_type="group", mentions=[BOB]),
            BOT_OPEN_ID,
            "does not mention the bot",
        ),
        (LARK.text("oc_1", "ou_a", "@_user_1", mentions=[BOT]), None, "no text"),
        (LARK.text("oc_1", "cli_other_bot", "hello", sender_type="app"), None, "not a person"),
    ],
)
def test_messages_not_for_synapse_are_ignored(
    payload: dict[str, Any], bot_open_id: str | None, reason: str
) -> None:
    found = read(payload, bot_open_id)
    assert isinstance(found, Ignored)
    assert reason in found.reason


def test_other_message_types_are_unsupported_but_only_when_addressed() -> None:
    image = LARK.message(chat_id="oc_1", sender="ou_a", message_type="image", content="{}", message_id="om_7")
    assert read(image) == Unsupported("oc_1", "om_7", "image")
    in_group = LARK.message(
        chat_id="oc_g", sender="ou_a", message_type="file", content="{}", chat_type="group"
    )
    assert isinstance(read(in_group), Ignored)
