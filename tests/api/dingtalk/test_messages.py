"""Reading DingTalk bot messages (pure): which session, which chat, who, what text."""

from __future__ import annotations

from typing import Any

import pytest

from api.chat.conversations import ChatText, Ignored, Unsupported
from api.dingtalk.messages import read_message, session_key_for
from tests.fakes.dingtalk_open_api import FakeDingTalk

FAKE = FakeDingTalk(client_id="ding-test")


def message(text: str = "hello", **fields: Any) -> dict[str, Any]:
    options = {
        key: fields.pop(key)
        for key in ("conversation", "sender", "group", "mentioned", "msgtype")
        if key in fields
    }
    data = FAKE.bot_message(text, **options)
    data.update(fields)
    return data


def test_a_mentioned_group_message_is_the_conversations_session() -> None:
    found = read_message(message("  delete the cancelled orders ", conversation="cidAb+c/d=="))

    assert isinstance(found, ChatText)
    assert (found.session_key, found.chat_id) == ("dingtalk:cidAb-c_d", "cidAb+c/d==")
    inbound = found.message
    assert (inbound.channel, inbound.sender_id, inbound.content) == (
        "dingtalk",
        "alice",
        "delete the cancelled orders",
    )
    assert inbound.message_id and inbound.metadata["conversation_id"] == "cidAb+c/d=="


def test_a_one_on_one_message_answers_the_person() -> None:
    found = read_message(message(conversation="cidDm", sender="bob", group=False, mentioned=False))

    assert isinstance(found, ChatText)
    assert (found.session_key, found.chat_id) == ("dingtalk:cidDm", "user:bob")


@pytest.mark.parametrize(
    ("data", "why"),
    [
        (message(mentioned=False), "does not mention the bot"),
        (message("   "), "no text"),
        (message(conversationId=""), "no conversationId"),
        (message(senderStaffId=None, senderId=None), "no conversationId or sender"),
        (message(conversationId="cid" + "x" * 300), "invalid session key"),
        ({"msgtype": "text"}, "not a bot message"),
    ],
)
def test_what_is_not_for_a_session_is_ignored_with_the_reason(data: dict[str, Any], why: str) -> None:
    found = read_message(data)

    assert isinstance(found, Ignored) and why in found.reason


def test_someone_outside_the_org_is_named_by_their_sender_id() -> None:
    found = read_message(message(senderStaffId=""))

    assert isinstance(found, ChatText) and found.message.sender_id == "$:LWCP_v1:$alice"


def test_a_picture_deserves_a_reply_in_its_chat() -> None:
    assert read_message(message(msgtype="picture", group=False, mentioned=False)) == Unsupported(
        "user:alice", None, "picture"
    )


def test_a_malformed_body_is_ignored_not_raised() -> None:
    found = read_message({"msgtype": "text", "text": "not an object", "conversationId": "cid1"})

    assert isinstance(found, Ignored) and "not a bot message" in found.reason


@pytest.mark.parametrize("conversation", ["cid+/=", "cidAAA==", "cid_-.", "cid" + "9" * 150])
def test_session_keys_are_valid_and_distinct_per_conversation(conversation: str) -> None:
    key = session_key_for(conversation)
    assert key.startswith("dingtalk:") and "+" not in key and "/" not in key and "=" not in key
    assert session_key_for(conversation + "x") != key
