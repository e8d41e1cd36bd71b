"""A tool marked `critical` in its descriptor needs two distinct approvers, whatever the policies say."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import httpx
import pytest
from temporalio.client import Client

from activities.tools.runner import ToolActivities
from core.settings import Settings
from tests.support import asked
from worker import build_worker

from .test_sessions import ask_for_delete, decide, new_key


@asynccontextmanager
async def critical_sql_worker(client: Client, settings: Settings) -> AsyncIterator[None]:
    """A worker whose `sql` tool is marked critical: its calls need two distinct approvers."""
    tools = ToolActivities(settings)
    sql = tools.tools["sql"]
    sql.descriptor = sql.descriptor.model_copy(update={"critical": True})
    async with build_worker(client, settings, tools=tools):
        yield


@pytest.fixture
async def worker(client: Client, settings: Settings) -> AsyncIterator[None]:
    """A worker whose `sql` tool is marked critical."""
    async with critical_sql_worker(client, settings):
        yield


async def test_a_critical_tool_needs_two_approvers(
    http: httpx.AsyncClient, count_orders: Callable[[str], int]
) -> None:
    key = new_key()
    request = await ask_for_delete(http, key)
    interaction_id = asked(request).interaction_id
    first = await decide(http, key, interaction_id, approved=True, principal="bob")
    assert first.status_code == 202 and first.json()["complete"] is False
    assert count_orders("status = 'cancelled'") == 3
    second = await decide(http, key, interaction_id, approved=True, principal="carol")
    assert second.status_code == 200 and second.json()["approvals"] == ["bob", "carol"]
    assert count_orders("status = 'cancelled'") == 0


async def test_one_person_under_two_spellings_counts_once(
    http: httpx.AsyncClient, count_orders: Callable[[str], int]
) -> None:
    """A Lark open_id with or without its `lark:` prefix is one person: not two approvers."""
    key = new_key()
    request = await ask_for_delete(http, key)
    interaction_id = asked(request).interaction_id
    assert (await decide(http, key, interaction_id, approved=True, principal="ou_alice")).status_code == 202
    again = await decide(http, key, interaction_id, approved=True, principal="lark:ou_alice")
    assert again.status_code == 409 and "already approved" in again.json()["detail"]
    assert count_orders("status = 'cancelled'") == 3, "nothing ran"
