"""A task graph from a Lark chat: its gates and tool approvals are cards in the chat, decided by a
click or a reply, and the chat gets the graph's outputs."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx

from tests.conftest import assert_eventually
from tests.fakes.lark_events import LarkEvents
from tests.fakes.lark_open_api import FakeLarkOpenApi, FakeMessage
from tests.workflows.graph.flows import edge, task

from .conftest import ALICE
from .test_inbound import CARD, _cards, chat_texts, new_chat, post, say

PLAN = {
    "new_tasks": [
        task("count", input_data={"sql": "DELETE FROM orders WHERE status = 'cancelled'"}),
        task(
            "announce", input_data={}, directives={"human_interaction": {"prompt": "Announce the cleanup?"}}
        ),
    ],
    "new_edges": [edge("count", "announce", data_flow={"mappings": {"report": "output"}})],
}


def buttons(card: FakeMessage) -> dict[str, dict[str, Any]]:
    """The card's button values by action."""
    text = json.dumps(card.content)
    values = {}
    for action in ("approve", "deny"):
        start = text.index(f'{{"action": "{action}"')
        values[action] = json.loads(text[start : text.index("}", start) + 1])
    return values


async def test_graph_requests_are_cards_decided_by_clicks_and_replies(
    http: httpx.AsyncClient, lark: LarkEvents, lark_api: FakeLarkOpenApi, count_orders: Callable[[str], int]
) -> None:
    chat = new_chat()
    await say(http, lark, lark_api, chat, "plan: " + json.dumps(PLAN))
    cards = await assert_eventually(lambda: _cards(lark_api, chat), bool, what="the tool approval card")
    approval = buttons(cards[0])["approve"]
    assert approval["workflow_id"].startswith("graph:") and ":task:" in approval["workflow_id"]
    assert approval["session_key"] == f"lark:{chat}"
    answer = await post(http, CARD, lark, lark.card_action(operator=ALICE, value=approval, chat_id=chat))
    assert answer.status_code == 200 and answer.json()["toast"]["type"] == "success", answer.text
    assert count_orders("status = 'cancelled'") == 0
    cards = await assert_eventually(
        lambda: _cards(lark_api, chat), lambda c: len(c) == 2, what="the gate card"
    )
    assert "Announce the cleanup?" in json.dumps(cards[1].content, ensure_ascii=False)
    assert buttons(cards[1])["approve"]["workflow_id"] == approval["workflow_id"].split(":task:")[0]
    await say(http, lark, lark_api, chat, "确认")
    texts = await assert_eventually(
        lambda: chat_texts(lark_api, chat),
        lambda t: any('"status": "completed"' in x for x in t),
        what="the outputs",
    )
    final = json.loads(next(x for x in texts if '"status": "completed"' in x))
    assert list(final["outputs"]) == ["announce"] and "3 rows" in json.dumps(final["outputs"])
    updates = await assert_eventually(
        lambda: _updated(lark_api), lambda u: len(u) >= 2, what="both cards updated"
    )
    titles = [update.content["header"]["title"]["content"] for update in updates]
    assert titles == ["Approved: sql", "Approved: task announce"], titles


async def _updated(api: FakeLarkOpenApi) -> list[Any]:
    return api.card_updates()
