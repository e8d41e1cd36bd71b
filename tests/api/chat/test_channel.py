"""Lark and DingTalk as `ChatChannel`s (`api/chat/channel.py`): names, people and principals."""

from __future__ import annotations

from typing import Any

from api.chat.channel import ChatChannel
from api.dingtalk.channel import DingTalkChat
from api.lark.channel import LarkChat
from core.settings import Settings


def test_each_channel_says_its_name_its_people_and_who_a_user_is(settings: Settings) -> None:
    lark = settings.model_copy(update={"lark": settings.lark.model_copy(update={"admins": "ou_1"})})
    channels: list[ChatChannel[Any, Any, Any]] = [LarkChat(lark), DingTalkChat(settings)]
    assert channels[0].people.admins == ["ou_1"]
    assert [channel.name for channel in channels] == ["lark", "dingtalk"]
    assert channels[0].principal("lark:ou_1") == channels[0].principal("ou_1") == "ou_1"
    assert channels[1].principal("manager4") == "manager4"
    assert channels[1].people.admins == settings.dingtalk.admin_ids
