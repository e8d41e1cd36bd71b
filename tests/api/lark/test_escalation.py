"""Escalation in a Lark chat: a request nobody decides within its escalation time also asks
`escalate_to`; the chat is told, and the person it names may then decide on the card."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from core.settings import Settings
from tests.conftest import assert_eventually
from tests.fakes.lark_events import LarkEvents
from tests.fakes.lark_open_api import FakeLarkOpenApi

from ...support import declaring
from .conftest import ADMIN, ALICE, lark_settings
from .test_inbound import _audit, _cards, ask_for_delete_in_lark, chat_texts, click, new_chat

DAVE = "ou_dave"
"""Asked too once nobody decided in time."""

AGENTS = f"""
[agents.demo]
framework = "demo"
model = "demo"

[agents.demo.policies.sql]
escalate_to = ["{DAVE}"]
escalate_after_seconds = 2
"""


@pytest.fixture
def settings(tmp_path: Path, task_queue: str, lark_api: FakeLarkOpenApi) -> Settings:
    """The Lark test settings, with `Agent:demo`'s `sql` calls escalating to Dave after 2 s."""
    return declaring(lark_settings(tmp_path, task_queue, lark_api), AGENTS, tmp_path)


def reminders(texts: list[str]) -> list[str]:
    """The escalation reminders among a chat's texts."""
    return [text for text in texts if "still waiting for a decision" in text]


async def test_an_undecided_request_reminds_the_chat_and_the_escalated_person_decides(
    http: httpx.AsyncClient, lark: LarkEvents, lark_api: FakeLarkOpenApi, count_orders: Callable[[str], int]
) -> None:
    chat = new_chat()
    key, interaction_id = await ask_for_delete_in_lark(http, lark, lark_api, chat)
    [card] = await assert_eventually(lambda: _cards(lark_api, chat), bool, what="the approval card")
    shown = json.dumps(card.content, ensure_ascii=False)
    assert f"**Who may approve:** <at id={ALICE}></at>, <at id={ADMIN}></at>" in shown
    assert DAVE not in shown, "Dave is asked only once nobody decided in time"

    texts = await assert_eventually(
        lambda: chat_texts(lark_api, chat), lambda t: bool(reminders(t)), within=60, what="the reminder"
    )
    [reminder] = reminders(texts)
    assert interaction_id in reminder and DAVE in reminder, reminder
    pending = (await http.get(f"/sessions/{key}")).json()["pending_interactions"]
    assert [(p["interaction_id"], p["escalated"], p["approvers"]) for p in pending] == [
        (interaction_id, True, [ALICE, ADMIN, DAVE])
    ]
    assert count_orders("status = 'cancelled'") == 3, "an escalation decides nothing"

    answer = await click(http, lark, DAVE, "approve", key, interaction_id)
    if answer["toast"]["type"] == "info":  # a loaded machine: applying it outlived the click's answer
        assert "still applying" in answer["toast"]["content"], answer
    else:
        assert answer["toast"] == {"type": "success", "content": f"Approved by {DAVE} (lark)."}, answer
        assert answer["card"]["data"]["header"]["title"]["content"] == "Approved: sql"
    await assert_eventually(
        lambda: _audit(http, key), lambda entries: len(entries) == 3, what="the click's decision"
    )
    await assert_eventually(
        lambda: asyncio.to_thread(count_orders, "status = 'cancelled'"), lambda n: n == 0, what="the DELETE"
    )
    audit = await _audit(http, key)
    assert [(e["kind"], e["principal"], e["channel"]) for e in audit] == [
        ("requested", ALICE, "lark"),
        ("escalated", "system:timeout", "system"),
        ("approved", DAVE, "lark"),
    ]
    texts = await assert_eventually(
        lambda: chat_texts(lark_api, chat),
        lambda t: "DELETE done: 3 rows affected." in t,
        within=60,
        what="the result in the chat",
    )
    assert texts == [reminder, "DELETE done: 3 rows affected."], "reminded once, then the answer"


async def test_the_reminder_mentions_the_escalated_person_so_lark_notifies_them(
    http: httpx.AsyncClient, lark: LarkEvents, lark_api: FakeLarkOpenApi
) -> None:
    """An open_id written as plain text is opaque to people and notifies nobody; in a Lark text
    message a person is mentioned as `<at user_id="ou_…"></at>` (as the card mentions approvers)."""
    chat = new_chat()
    _, interaction_id = await ask_for_delete_in_lark(http, lark, lark_api, chat)
    texts = await assert_eventually(
        lambda: chat_texts(lark_api, chat), lambda t: bool(reminders(t)), within=60, what="the reminder"
    )
    [reminder] = reminders(texts)
    assert interaction_id in reminder
    assert f'<at user_id="{DAVE}"></at>' in reminder, reminder
