"""The two-person rule in a Lark chat: the card shows "1/2 approvals" after the first click and
runs the statement after a second, different person approves."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from api.lark.clicks import still_applying
from core.settings import Settings
from tests.conftest import assert_eventually
from tests.fakes.lark_events import LarkEvents
from tests.fakes.lark_open_api import FakeLarkOpenApi

from ...support import declaring
from .conftest import ADMIN, ALICE, lark_settings
from .test_inbound import _updates, ask_for_delete_in_lark, click, new_chat

AGENTS = """
[agents.demo]
framework = "demo"
model = "demo"

[agents.demo.policies.sql]
approvals_required = 2
"""


@pytest.fixture
def settings(tmp_path: Path, task_queue: str, lark_api: FakeLarkOpenApi) -> Settings:
    """The Lark test settings, with `Agent:demo` declared to need two approvers for `sql`."""
    return declaring(lark_settings(tmp_path, task_queue, lark_api), AGENTS, tmp_path)


async def test_the_card_shows_one_of_two_approvals_and_a_second_person_decides(
    http: httpx.AsyncClient, lark: LarkEvents, lark_api: FakeLarkOpenApi, count_orders: Callable[[str], int]
) -> None:
    key, interaction_id = await ask_for_delete_in_lark(http, lark, lark_api, new_chat())
    first = await click(http, lark, ALICE, "approve", key, interaction_id)
    if first != still_applying():  # the answer a starved machine gives past Lark's window
        assert first["toast"]["type"] == "success", first
        assert "(1/2): another approver must approve too" in first["toast"]["content"]
        assert "**Approvals:** 1/2" in json.dumps(first["card"]["data"], ensure_ascii=False)
    assert count_orders("status = 'cancelled'") == 3
    updates = await assert_eventually(lambda: _updates(lark_api), bool, what="the card updated to 1/2")
    assert "Approvals:** 1/2" in json.dumps(updates[-1].content, ensure_ascii=False)
    again = await click(http, lark, ALICE, "approve", key, interaction_id)
    assert again["toast"]["type"] == "error" and "must come from someone else" in again["toast"]["content"]
    second = await click(http, lark, ADMIN, "approve", key, interaction_id)
    assert second["toast"]["type"] == "success", second
    assert count_orders("status = 'cancelled'") == 0
    audit = (await http.get(f"/sessions/{key}/audit")).json()["entries"]
    assert [(e["kind"], e["principal"]) for e in audit if e["kind"] != "requested"] == [
        ("approval_counted", ALICE),
        ("rejected", ALICE),  # the second click by the same person: refused, and recorded
        ("approved", ADMIN),
    ]
