"""The console under a key scoped to projects: it says which projects the key has, lists only
their sessions and graphs, and a link to another project's session or graph says it was not found
(the API's 404) instead of breaking."""

from __future__ import annotations

import functools
import uuid
from collections.abc import AsyncIterator

import httpx
import pytest
from playwright.async_api import Browser, expect
from temporalio.client import Client

from core.settings import Settings

from ...conftest import assert_eventually
from ...workflows.graph.flows import gated
from ..test_project_scope import BEA, SAM, scoped_api
from .conftest import shot


def listed(field: str, wanted: str, answer: httpx.Response) -> bool:
    """Whether a listing's answer holds the item whose `field` is `wanted`."""
    return wanted in {item[field] for item in answer.json()}


@pytest.fixture
async def keyed(client: Client, settings: Settings, worker: None) -> AsyncIterator[httpx.AsyncClient]:
    """The API with the keys of `test_project_scope` (sam: shop, bea: billing)."""
    async with scoped_api(client, settings) as http:
        yield http


async def test_a_shop_key_sees_shop_and_is_told_billings_work_is_not_found(
    browser: Browser, keyed: httpx.AsyncClient
) -> None:
    made: dict[str, tuple[str, str]] = {}
    for project, headers in (("shop", SAM), ("billing", BEA)):
        key = f"{project}-{uuid.uuid4().hex[:8]}"
        assert (await keyed.post("/sessions", json={"session_key": key}, headers=headers)).status_code == 201
        graph = await keyed.post(
            "/graphs", json={"blueprint": {"new_tasks": [gated("hold")]}}, headers=headers
        )
        assert graph.status_code == 201, graph.text
        made[project] = (key, graph.json()["graph_id"])
    (shop, shop_graph), (billing, billing_graph) = made["shop"], made["billing"]
    for path, field, wanted in (("/sessions", "session_key", shop), ("/graphs", "graph_id", shop_graph)):
        await assert_eventually(  # visibility lists what started a moment later
            functools.partial(keyed.get, path, params={"limit": 500}, headers=SAM),
            functools.partial(listed, field, wanted),
            what=f"{wanted} listed",
        )

    context = await browser.new_context(base_url=str(keyed.base_url))
    page = await context.new_page()
    try:
        await page.goto("/ui/")
        await page.get_by_label("API key").fill("k-shop")
        await page.get_by_role("button", name="Use").click()
        await expect(page.locator("#whoami")).to_have_text("sam (approver · shop)")

        await page.goto("/ui/#/sessions")
        await expect(page.get_by_role("link", name=shop, exact=True)).to_be_visible()
        await expect(page.get_by_role("link", name=billing, exact=True)).to_have_count(0)
        await page.goto("/ui/#/graphs")
        await expect(
            page.get_by_role("row", name=shop_graph).get_by_role("link", name="hold")
        ).to_be_visible()
        await expect(page.get_by_role("row", name=billing_graph)).to_have_count(0)

        await page.goto(f"/ui/#/sessions/{billing}")
        await expect(page.locator("#session-status")).to_have_text(
            f"Could not read the session: no session '{billing}'"
        )
        await page.goto(f"/ui/#/graphs/{billing_graph}")
        await expect(
            page.get_by_text(f"Could not read the graph: no graph '{billing_graph}'")
        ).to_be_visible()
        await shot(page, "scoped-key-other-project")
    finally:
        await context.close()
