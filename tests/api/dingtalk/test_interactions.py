"""Questions, grants, the two-person rule and graph gates in a DingTalk chat, as in a Lark chat: a reply
answers the agent's question; "approve_session" grants the same call; a second person completes a
two-person approval; a graph's gates and tool approvals are cards decided by clicks and replies."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from contracts import TaskChunkType
from core.settings import Settings
from tests.fakes.dingtalk_open_api import FakeDingTalk
from tests.workflows.graph.flows import edge, task

from ...support import collect_events, declaring
from ..lark.test_two_person import AGENTS as TWO_PEOPLE
from ..test_sessions import DELETE_CANCELLED, is_type
from .chat import card_for, new_group, press, say, status_of, texts, user_messages
from .conftest import ADMIN, ALICE, dingtalk_settings

PLAN = {
    "new_tasks": [
        task("count", input_data={"sql": DELETE_CANCELLED}),
        task(
            "announce", input_data={}, directives={"human_interaction": {"prompt": "Announce the cleanup?"}}
        ),
    ],
    "new_edges": [edge("count", "announce", data_flow={"mappings": {"report": "output"}})],
}


async def test_a_reply_answers_the_agents_question(http: httpx.AsyncClient, dingtalk: FakeDingTalk) -> None:
    group, key = new_group()
    await say(dingtalk, group, "ask: Which region?")
    question = "❓ Which region?\n（直接回复即可回答 / Reply in this chat to answer · input_1）"
    assert await texts(dingtalk, bool, conversation=group) == [question]

    await say(dingtalk, group, "eu-west")

    said = await texts(dingtalk, lambda t: len(t) == 2, conversation=group)
    assert said == [question, f'{ALICE} answered "Which region?": eu-west']
    assert dingtalk.cards == {}, "a question is no approval card"
    audit = (await http.get(f"/sessions/{key}/audit")).json()["entries"]
    assert (audit[-1]["kind"], audit[-1]["principal"], audit[-1]["channel"]) == (
        "answered",
        ALICE,
        "dingtalk",
    )
    assert [m["content"] for m in await user_messages(http, key)] == ["ask: Which region?"]


async def test_approve_for_this_session_grants_the_same_call(
    http: httpx.AsyncClient, dingtalk: FakeDingTalk, count_orders: Callable[[str], int]
) -> None:
    group, key = new_group()
    await say(dingtalk, group, DELETE_CANCELLED)
    card = await card_for(dingtalk)
    assert card.params["can_grant"] == "true"

    await press(dingtalk, card, ALICE, "approve_session")

    await status_of(dingtalk, card, "approved")
    assert (
        "allowed for the rest of the session (grant_1)"
        in dingtalk.cards[card.out_track_id].params["status_text"]
    )
    grants = (await http.get(f"/sessions/{key}/grants")).json()["grants"]
    assert [(g["grant_id"], g["granted_by"], g["channel"]) for g in grants] == [
        ("grant_1", ALICE, "dingtalk")
    ]
    offset = (await collect_events(http, key, is_type(TaskChunkType.COMPLETE)))[-1].sequence_id
    await say(dingtalk, group, DELETE_CANCELLED)
    await collect_events(http, key, is_type(TaskChunkType.COMPLETE), params={"after": offset})
    assert len(dingtalk.cards) == 1, "the granted call ran without a new card"
    assert count_orders("status = 'cancelled'") == 0


@pytest.fixture
def two_people(tmp_path: Path, task_queue: str, dingtalk: FakeDingTalk) -> Settings:
    return declaring(dingtalk_settings(tmp_path, task_queue, dingtalk), TWO_PEOPLE, tmp_path)


class TestTwoPeople:
    @pytest.fixture
    def settings(self, two_people: Settings) -> Settings:
        """`Agent:demo` needs two approvers for `sql` here."""
        return two_people

    async def test_one_of_two_approvals_shows_on_the_card_and_a_second_person_decides(
        self, http: httpx.AsyncClient, dingtalk: FakeDingTalk, count_orders: Callable[[str], int]
    ) -> None:
        group, key = new_group()
        await say(dingtalk, group, DELETE_CANCELLED)
        card = await card_for(dingtalk)
        assert card.params["approvals"] == "0/2"

        await press(dingtalk, card, ALICE, "approve")

        partly = await status_of(dingtalk, card, "partly_approved")
        assert partly["approvals"] == "1/2" and partly["buttons"] == "true"
        assert count_orders("status = 'cancelled'") == 3
        await press(dingtalk, card, ALICE, "approve")
        [refusal] = await texts(dingtalk, bool, user=ALICE)
        assert "must come from someone else" in refusal
        await press(dingtalk, card, ADMIN, "approve")
        await status_of(dingtalk, card, "approved")
        assert count_orders("status = 'cancelled'") == 0
        audit = (await http.get(f"/sessions/{key}/audit")).json()["entries"]
        assert [(e["kind"], e["principal"]) for e in audit if e["kind"] != "requested"] == [
            ("approval_counted", ALICE),
            ("rejected", ALICE),  # the second click by the same person: refused, and recorded
            ("approved", ADMIN),
        ]


async def test_graph_gates_are_cards_decided_by_clicks_and_replies(
    http: httpx.AsyncClient, dingtalk: FakeDingTalk, count_orders: Callable[[str], int]
) -> None:
    group, key = new_group()
    await say(dingtalk, group, "plan: " + json.dumps(PLAN))
    approval = await card_for(dingtalk)
    assert approval.params["workflow_id"].startswith("graph:") and ":task:" in approval.params["workflow_id"]
    assert approval.params["session_key"] == key

    await press(dingtalk, approval, ALICE, "approve")

    await status_of(dingtalk, approval, "approved")
    assert count_orders("status = 'cancelled'") == 0
    gate = await card_for(dingtalk, 2)
    assert gate.params["title"] == "Confirmation needed: task announce"
    assert gate.params["reason"] == "Announce the cleanup?"
    assert json.loads(gate.params["arguments"]) == {"report": "DELETE done: 3 rows affected."}
    await say(dingtalk, group, "确认")
    await status_of(dingtalk, gate, "approved")
    said = await texts(dingtalk, lambda t: any('"status": "completed"' in x for x in t), conversation=group)
    final = json.loads(next(x for x in said if '"status": "completed"' in x))
    assert list(final["outputs"]) == ["announce"] and "3 rows" in json.dumps(final["outputs"])
