"""The two-person rule's other half in a Lark chat: one denial of a critical tool call denies it.
The request is closed at once, a later approval (by click or over HTTP) is refused, nothing runs,
and the agent is told it was denied."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
import pytest
from temporalio.client import Client

from core.settings import Settings
from tests.conftest import assert_eventually
from tests.fakes.lark_events import LarkEvents
from tests.fakes.lark_open_api import FakeLarkOpenApi

from ..test_critical_tools import critical_sql_worker
from ..test_sessions import DELETE_CANCELLED
from .conftest import ADMIN, ALICE
from .test_inbound import _audit, _cards, _updates, ask_for_delete_in_lark, chat_texts, click, new_chat


@pytest.fixture
async def worker(client: Client, settings: Settings) -> AsyncIterator[None]:
    """A worker whose `sql` tool is marked critical: its calls need two distinct approvers."""
    async with critical_sql_worker(client, settings):
        yield


async def session(http: httpx.AsyncClient, key: str) -> dict[str, Any]:
    found: dict[str, Any] = (await http.get(f"/sessions/{key}")).json()
    return found


async def denied_and_told(
    http: httpx.AsyncClient,
    lark: LarkEvents,
    lark_api: FakeLarkOpenApi,
    chat: str,
    key: str,
    interaction_id: str,
) -> None:
    """After `ALICE`'s denial: the request is closed, approvals are refused, the agent was told."""
    status = await assert_eventually(
        lambda: session(http, key),
        lambda s: s["status"] == "active" and not s["pending_interactions"],
        within=60,
        what="the request closed",
    )
    tool_messages = [m for m in status["messages"] if m["role"] == "tool"]
    assert [(m["content"]["denied"], m["content"]["decided_by"]) for m in tool_messages] == [(True, ALICE)], (
        "the agent is given the denial as the tool's result"
    )
    told = f"I did not run sql: denied by {ALICE} (a person denied it)."
    texts = await assert_eventually(
        lambda: chat_texts(lark_api, chat),
        lambda t: bool(t),
        within=60,
        what="the agent's answer in the chat",
    )
    assert texts == [told], "the chat gets the agent's answer, once"

    late = await click(http, lark, ADMIN, "approve", key, interaction_id)
    assert late["toast"]["type"] == "info", late
    assert late["toast"]["content"].startswith(f"Already denied by {ALICE} (lark) at "), late
    assert "card" not in late, "the card is not redrawn as if it were still open"
    over_http = await http.post(
        f"/sessions/{key}/interactions/{interaction_id}", json={"approved": True, "principal": ADMIN}
    )
    assert over_http.status_code == 409, over_http.text
    assert f"already denied by {ALICE}" in over_http.json()["detail"]


async def test_one_denial_of_a_critical_call_closes_it_and_a_later_approval_is_refused(
    http: httpx.AsyncClient, lark: LarkEvents, lark_api: FakeLarkOpenApi, count_orders: Callable[[str], int]
) -> None:
    chat = new_chat()
    key, interaction_id = await ask_for_delete_in_lark(http, lark, lark_api, chat)
    [card] = await assert_eventually(lambda: _cards(lark_api, chat), bool, what="the approval card")
    assert "**Approvals:** 0/2 (nobody yet)" in json.dumps(card.content, ensure_ascii=False)

    denied = await click(http, lark, ALICE, "deny", key, interaction_id)
    assert denied["toast"] == {"type": "success", "content": f"Denied by {ALICE} (lark)."}
    assert denied["card"]["data"]["header"]["title"]["content"] == "Denied: sql"

    await denied_and_told(http, lark, lark_api, chat, key, interaction_id)
    updates = await assert_eventually(lambda: _updates(lark_api), bool, what="the card updated")
    assert [u.content["header"]["title"]["content"] for u in updates] == ["Denied: sql"]
    assert count_orders("status = 'cancelled'") == 3, "nothing ran"
    assert [(e["kind"], e["principal"]) for e in await _audit(http, key)] == [
        ("requested", ALICE),
        ("denied", ALICE),
        ("rejected", ADMIN),  # the late click, refused and recorded
        ("rejected", ADMIN),  # the late approval over HTTP, too
    ]


async def test_a_denial_after_one_approval_of_two_denies(
    http: httpx.AsyncClient, lark: LarkEvents, lark_api: FakeLarkOpenApi, count_orders: Callable[[str], int]
) -> None:
    chat = new_chat()
    key, interaction_id = await ask_for_delete_in_lark(http, lark, lark_api, chat)
    first = await click(http, lark, ADMIN, "approve", key, interaction_id)
    assert first["toast"]["type"] == "success", first
    assert "(1/2): another approver must approve too" in first["toast"]["content"]
    assert count_orders("status = 'cancelled'") == 3

    denied = await click(http, lark, ALICE, "deny", key, interaction_id)
    assert denied["toast"] == {"type": "success", "content": f"Denied by {ALICE} (lark)."}

    await denied_and_told(http, lark, lark_api, chat, key, interaction_id)
    assert count_orders("status = 'cancelled'") == 3, "one approval of two ran nothing"
    assert [(e["kind"], e["principal"]) for e in await _audit(http, key)] == [
        ("requested", ALICE),
        ("approval_counted", ADMIN),
        ("denied", ALICE),
        ("rejected", ADMIN),  # the late click, refused and recorded
        ("rejected", ADMIN),  # the late approval over HTTP, too
    ]
    assert DELETE_CANCELLED in json.dumps((await _cards(lark_api, chat))[0].content)
