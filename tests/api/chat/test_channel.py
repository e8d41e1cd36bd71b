"""Lark and DingTalk as `ChatChannel`s (`api/chat/channel.py`): names, session keys, people, principals
and delivery refusals."""

from __future__ import annotations

from typing import Any

from api.calls.sessions import chat_of
from api.chat.channel import ChatChannel
from api.dingtalk.channel import DingTalkChat
from api.dingtalk.messages import session_key_for as dingtalk_key
from api.lark.channel import LarkChat
from api.lark.messages import session_key_for as lark_key
from contracts import CHAT_CHANNEL_NAMES, CHAT_CHANNELS, DELIVERY_REFUSALS
from core.settings import Settings


def test_each_channel_says_its_name_its_people_and_who_a_user_is(settings: Settings) -> None:
    lark = settings.model_copy(update={"lark": settings.lark.model_copy(update={"admins": "ou_1"})})
    channels: list[ChatChannel[Any, Any, Any, Any]] = [LarkChat(lark), DingTalkChat(settings)]
    assert channels[0].people.admins == ["ou_1"]
    assert [channel.name for channel in channels] == ["lark", "dingtalk"]
    assert channels[0].principal("lark:ou_1") == channels[0].principal("ou_1") == "ou_1"
    assert channels[1].principal("manager4") == "manager4"
    assert channels[1].people.admins == settings.dingtalk.admin_ids


def test_a_channel_s_session_keys_are_its_own_and_no_call_of_the_api_starts_one(settings: Settings) -> None:
    lark, dingtalk = LarkChat(settings), DingTalkChat(settings)
    assert {lark.name, dingtalk.name} == CHAT_CHANNELS == set(CHAT_CHANNEL_NAMES)
    assert (
        chat_of(lark_key("oc_1")) == chat_of(lark_key("oc_1", "omt_1")) == CHAT_CHANNEL_NAMES[lark.name].title
    )
    assert chat_of(dingtalk_key("cid+1/x==")) == CHAT_CHANNEL_NAMES[dingtalk.name].title == "DingTalk"
    assert chat_of("larkspur") is None and chat_of("http-1") is None


def test_every_channel_s_refusals_are_named_for_the_retry_policy() -> None:
    for channel in CHAT_CHANNEL_NAMES.values():
        assert set(channel.refusals) <= set(DELIVERY_REFUSALS), channel
        assert all(refusal.value.startswith(channel.title) for refusal in channel.refusals), channel


def test_admins_named_with_the_prefix_are_the_chat_users_they_name(settings: Settings) -> None:
    lark = settings.model_copy(
        update={"lark": settings.lark.model_copy(update={"admins": "lark:ou_1, ou_2"})}
    )
    channel = LarkChat(lark)
    assert channel.people.admins == ["ou_1", "ou_2"]
    assert channel.principal("ou_1") in channel.people.admins
