"""Questions and grants in a Lark chat: a reply answers the agent's question; "Approve for this
session" on a card grants the same call, which then runs without a card."""

from __future__ import annotations

import json
from collections.abc import Callable

import httpx

from contracts import TaskChunkType
from tests.conftest import assert_eventually
from tests.fakes.lark_events import LarkEvents
from tests.fakes.lark_open_api import FakeLarkOpenApi

from ...support import collect_events
from ..test_sessions import DELETE_CANCELLED, is_type
from .conftest import ALICE
from .test_inbound import _cards, ask_for_delete_in_lark, chat_texts, click, new_chat, say, user_messages


async def test_a_reply_in_the_chat_answers_the_agents_question(
    http: httpx.AsyncClient, lark: LarkEvents, lark_api: FakeLarkOpenApi
) -> None:
    chat = new_chat()
    key = f"lark:{chat}"
    await say(http, lark, lark_api, chat, "ask: Which region?")
    question = "❓ Which region?\n（直接回复即可回答 / Reply in this chat to answer · input_1）"
    texts = await assert_eventually(lambda: chat_texts(lark_api, chat), bool, what="the question")
    assert texts == [question]
    assert await _cards(lark_api, chat) == [], "a question is no approval card"
    await say(http, lark, lark_api, chat, "eu-west")
    texts = await assert_eventually(
        lambda: chat_texts(lark_api, chat), lambda t: len(t) == 2, what="the agent's answer"
    )
    assert texts == [question, f'{ALICE} answered "Which region?": eu-west'], "one question, one answer"
    audit = (await http.get(f"/sessions/{key}/audit")).json()["entries"]
    assert (audit[-1]["kind"], audit[-1]["principal"], audit[-1]["channel"]) == ("answered", ALICE, "lark")
    assert [m["content"] for m in await user_messages(http, key)] == ["ask: Which region?"], (
        "the answer went to the question, not to the agent as a new message"
    )


async def test_approve_for_this_session_on_the_card_grants_the_same_call(
    http: httpx.AsyncClient, lark: LarkEvents, lark_api: FakeLarkOpenApi, count_orders: Callable[[str], int]
) -> None:
    chat = new_chat()
    key, interaction_id = await ask_for_delete_in_lark(http, lark, lark_api, chat)
    [card] = await assert_eventually(lambda: _cards(lark_api, chat), bool, what="the approval card")
    assert "Approve for this session" in json.dumps(card.content)
    answer = await click(http, lark, ALICE, "approve_session", key, interaction_id)
    assert answer["toast"]["type"] == "success", answer
    assert "allowed for the rest of the session (grant_1)" in answer["toast"]["content"]
    grants = (await http.get(f"/sessions/{key}/grants")).json()["grants"]
    assert [(g["grant_id"], g["scope"], g["granted_by"], g["channel"]) for g in grants] == [
        ("grant_1", "session", ALICE, "lark")
    ]
    offset = (await collect_events(http, key, is_type(TaskChunkType.COMPLETE)))[-1].sequence_id
    await say(http, lark, lark_api, chat, DELETE_CANCELLED)
    await collect_events(http, key, is_type(TaskChunkType.COMPLETE), params={"after": offset})
    assert len(await _cards(lark_api, chat)) == 1, "the granted call ran without a new card"
    assert (await http.get(f"/sessions/{key}/grants")).json()["grants"][0]["uses"] == 1
