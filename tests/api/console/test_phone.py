"""The console on a phone (390 px wide): the card a message opens is brought into view however long
the conversation above it, the sessions and graphs tables fit the screen, and a graph's diagram runs top to
bottom within it; at both widths an edge that skips a task is drawn clear of the task it skips."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest
from playwright.async_api import Browser, Page, ViewportSize, expect
from temporalio.client import Client

from workflows.identity.ids import session_workflow_id

from ...conftest import assert_eventually
from ...workflows.graph.flows import edge, task
from ..test_graphs import submit, wait_graph
from .conftest import shot
from .test_graph_page import node
from .test_session_page import card_for, open_session, send

PHONE: ViewportSize = {"width": 390, "height": 844}
DESKTOP: ViewportSize = {"width": 1280, "height": 800}


@pytest.fixture
async def phone(browser: Browser, http: httpx.AsyncClient) -> AsyncIterator[Page]:
    """A phone-sized page whose base is the API under test."""
    context = await browser.new_context(
        viewport=PHONE, is_mobile=True, has_touch=True, base_url=str(http.base_url)
    )
    opened = await context.new_page()
    opened.set_default_timeout(30_000)
    try:
        yield opened
    finally:
        await context.close()


async def fits(page: Page, selector: str) -> None:
    """Every element `selector` finds lies within the page's width, and the page does not scroll
    sideways."""
    width = page.viewport_size["width"] if page.viewport_size else 0
    edges = await page.eval_on_selector_all(
        selector,
        "(found) => found.map((e) => [e.getBoundingClientRect().left, e.getBoundingClientRect().right,"
        " e.textContent.slice(0, 80)])",
    )
    assert edges, f"nothing found for {selector}"
    outside = [(left, right, text) for left, right, text in edges if left < 0 or right > width]
    assert not outside, f"{selector}: {len(outside)} of {len(edges)} reach past the screen: {outside}"
    scroll = await page.evaluate("document.documentElement.scrollWidth")
    assert scroll <= width, f"the page scrolls sideways ({scroll} px at {width} px)"


async def test_a_card_opened_by_a_message_is_brought_into_view(phone: Page, http: httpx.AsyncClient) -> None:
    await open_session(phone, http)
    for n in range(2):  # a long conversation: the message box ends up thousands of pixels down
        await send(phone, f"note {n}: " + "a long line of words " * 300)
        await expect(phone.locator(".conversation > li", has_text=f"note {n}:").first).to_be_visible()
    tall = await phone.evaluate("document.documentElement.scrollHeight")
    assert tall > 4 * PHONE["height"], f"the page is {tall} px tall"
    await phone.get_by_role("textbox", name="Message", exact=True).scroll_into_view_if_needed()
    await send(phone, "DELETE FROM orders WHERE id = 11")
    card = phone.locator("article.card")
    await expect(card).to_have_count(1)
    await expect(card).to_be_in_viewport()
    await expect(card.get_by_role("button", name="Approve once")).to_be_in_viewport()
    await shot(phone, "phone-card-in-view")


async def test_the_sessions_and_graphs_tables_fit_a_phone(
    phone: Page, http: httpx.AsyncClient, client: Client
) -> None:
    created = await submit(http, {"new_tasks": [task("a-task-with-a-rather-long-name")], "new_edges": []})
    ended = await open_session(phone, http)  # a session Temporal ended: its reason is listed too
    await client.get_workflow_handle(session_workflow_id(ended)).terminate(reason="stopped by the on-call")
    await card_for(phone, http, "DELETE FROM orders WHERE id = 15")  # one waiting_approval
    key = await open_session(phone, http)
    await phone.goto("/ui/#/sessions")
    await expect(phone.get_by_role("link", name=key)).to_be_visible()
    await expect(phone.get_by_role("row", name=ended)).to_contain_text("its workflow")
    await expect(phone.locator("#connection")).to_have_text("")  # "Live" was the session page's
    await fits(phone, "table, th, td")
    await shot(phone, "phone-sessions")
    await assert_eventually(  # Temporal's visibility lists the graph a moment later
        lambda: http.get("/graphs", params={"limit": 500}),
        lambda got: created["graph_id"] in {g["graph_id"] for g in got.json()},
        what="the graph listed",
    )
    await phone.goto("/ui/#/graphs")
    await expect(phone.get_by_role("row", name=created["graph_id"])).to_be_visible()
    await fits(phone, "table, th, td")
    await shot(phone, "phone-graphs")


BLUEPRINT = {
    "new_tasks": [task("fetch"), task("count"), task("sum"), task("audit"), task("report")],
    "new_edges": [
        edge("fetch", "count"),
        edge("fetch", "audit"),
        edge("count", "sum"),
        edge("sum", "report"),
        edge("count", "report"),  # skips `sum`: drawn beside the chain, not behind it
    ],
}


async def crossed(page: Page, edge_name: str, task_id: str) -> list[list[float]]:
    """Points of the drawn edge `edge_name` (`count→report`) that lie inside task `task_id`'s box."""
    found: list[list[float]] = await page.evaluate(
        """([name, task]) => {
            const path = document.querySelector(`path[data-edge="${name}"]`);
            const box = document.querySelector(`.task-node[data-task="${task}"] rect`).getBoundingClientRect();
            const screen = path.getScreenCTM(), length = path.getTotalLength(), inside = [];
            for (let i = 0; i <= 200; i++) {
                const p = path.getPointAtLength((length * i) / 200).matrixTransform(screen);
                if (p.x > box.left && p.x < box.right && p.y > box.top && p.y < box.bottom) inside.push([p.x, p.y]);
            }
            return inside;
        }""",
        [edge_name, task_id],
    )
    return found


@pytest.mark.parametrize("size", [PHONE, DESKTOP], ids=["phone", "desktop"])
async def test_the_diagram_fits_the_screen_and_shows_every_edge(
    browser: Browser, http: httpx.AsyncClient, size: ViewportSize
) -> None:
    created = await submit(http, BLUEPRINT)
    gid = created["graph_id"]
    await wait_graph(http, gid, lambda v: v.status == "completed", "the graph completed")
    context = await browser.new_context(viewport=size, base_url=str(http.base_url))
    page = await context.new_page()
    try:
        await page.goto(f"/ui/#/graphs/{gid}")
        await expect(node(page, "report")).to_have_attribute("data-status", "completed")
        if size is PHONE:
            await fits(page, ".task-node")
        for name, skipped in [("count→report", "sum"), ("fetch→audit", "count"), ("fetch→count", "audit")]:
            assert await page.locator(f'path[data-edge="{name}"]').count() == 1
            assert not await crossed(page, name, skipped), f"{name} is drawn behind {skipped}"
        await shot(page, f"graph-diagram-{size['width']}")
    finally:
        await context.close()
