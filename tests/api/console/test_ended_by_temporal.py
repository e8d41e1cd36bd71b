"""The console shows a graph Temporal terminated as terminated, with the reason, on the graphs list
and on its page: no card for its withdrawn gate, its waiting task drawn cancelled."""

from __future__ import annotations

import httpx
from playwright.async_api import Page, expect
from temporalio.client import Client

from workflows.identity.ids import graph_workflow_id

from ...workflows.graph.flows import edge, gated, task
from ..test_graphs import submit, wait_graph
from .conftest import shot
from .test_graph_page import node

REASON = "runaway fan-out, stopped by the on-call"


async def test_a_terminated_graph_reads_terminated_on_the_console(
    page: Page, http: httpx.AsyncClient, client: Client
) -> None:
    created = await submit(
        http, {"new_tasks": [task("fetch"), gated("publish")], "new_edges": [edge("fetch", "publish")]}
    )
    gid = created["graph_id"]
    await wait_graph(http, gid, lambda v: len(v.pending_interactions) == 1, "publish at its gate")
    await client.get_workflow_handle(graph_workflow_id(gid)).terminate(reason=REASON)

    await page.goto("/ui/#/graphs")
    row = page.get_by_role("row").filter(has_text=gid)
    await expect(row).to_contain_text("terminated (closed)")
    await expect(row).to_contain_text(REASON)

    await page.goto(f"/ui/#/graphs/{gid}")
    await expect(page.locator("main p.muted").first).to_contain_text("terminated")
    await expect(page.locator("main p.muted").first).to_contain_text(REASON)
    await expect(node(page, "publish")).to_have_attribute("data-status", "cancelled")
    await expect(node(page, "fetch")).to_have_attribute("data-status", "completed")
    await expect(page.locator("article.card")).to_have_count(0)
    await expect(page.get_by_role("button", name="Pause graph")).to_have_count(0)
    await shot(page, "graph-terminated")
