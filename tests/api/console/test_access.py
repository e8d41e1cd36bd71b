"""Who may do what in the console, and whether everyone can use it: the key field shows only when
the API asks for keys, a viewer's key shows no decision buttons, a phone-sized screen approves from
a deep link, a keyboard alone finds a session and approves its request with the focus always
visible, and axe-core finds no serious accessibility violation on the pages."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
import pytest
from axe_playwright_python.async_playwright import Axe
from playwright.async_api import Browser, Page, ViewportSize, expect
from temporalio.client import Client

from api.main import create_app
from core.settings import ApiSettings, Settings

from ...conftest import assert_eventually
from ...support import serve
from ...workflows.graph.flows import gated
from ..test_sessions import new_key
from .conftest import shot

KEYS = "k-approve:alice:approver,k-view:vic:viewer"


async def asking(
    http: httpx.AsyncClient, key: str, sql: str, headers: dict[str, str] | None = None, **session: object
) -> str:
    """Start session `key` (with `session`'s fields), send `sql` and wait for its approval request;
    the interaction id."""
    created = await http.post("/sessions", json={"session_key": key, **session}, headers=headers)
    assert created.status_code == 201, created.text
    sent = await http.post(f"/sessions/{key}/messages?wait=true", json={"content": sql}, headers=headers)
    assert sent.status_code in (200, 202), sent.text
    live = await assert_eventually(
        lambda: http.get(f"/sessions/{key}", headers=headers),
        lambda got: bool(got.json()["pending_interactions"]),
        what=f"{key} asking for approval",
    )
    return str(live.json()["pending_interactions"][0]["interaction_id"])


@pytest.fixture
async def keyed(client: Client, settings: Settings, worker: None) -> AsyncIterator[httpx.AsyncClient]:
    """The API with API keys on (an approver and a viewer)."""
    keyed_settings = settings.model_copy(update={"api": ApiSettings(keys=KEYS)})
    async with serve(create_app(keyed_settings, client=client)) as http:
        yield http


async def use_key(page: Page, key: str) -> None:
    await page.get_by_label("API key").fill(key)
    await page.get_by_role("button", name="Use").click()


async def test_a_viewer_sees_the_request_but_no_button_to_decide_it(
    browser: Browser, keyed: httpx.AsyncClient
) -> None:
    key = new_key()
    await asking(keyed, key, "DELETE FROM orders WHERE id = 3", {"Authorization": "Bearer k-approve"})
    context = await browser.new_context(base_url=str(keyed.base_url))
    page = await context.new_page()
    try:
        await page.goto("/ui/")
        await use_key(page, "k-view")
        await expect(page.locator("#whoami")).to_have_text("vic (viewer)")
        await page.goto(f"/ui/#/sessions/{key}")
        card = page.locator("article.card")
        await expect(card).to_contain_text("sql wants approval")
        await expect(card).to_contain_text("deciding needs the approver role")
        await expect(card.get_by_role("button")).to_have_count(0)
        await expect(page.get_by_role("textbox", name="Message", exact=True)).to_have_count(0)

        await use_key(page, "k-approve")
        await expect(page.locator("#whoami")).to_have_text("alice (approver)")
        await page.goto(f"/ui/#/sessions/{key}")
        await expect(page.locator("article.card").get_by_role("button", name="Approve once")).to_be_visible()
    finally:
        await context.close()


async def test_the_key_field_shows_only_when_the_api_asks_for_keys(
    browser: Browser, http: httpx.AsyncClient, keyed: httpx.AsyncClient
) -> None:
    for api, asks in ((http, False), (keyed, True)):
        sizes: list[ViewportSize] = [{"width": 390, "height": 844}, {"width": 1280, "height": 800}]
        for size in sizes:
            context = await browser.new_context(viewport=size, base_url=str(api.base_url))
            page = await context.new_page()
            try:
                await page.goto("/ui/#/sessions")
                await expect(page.get_by_role("heading", name="Sessions")).to_be_visible()
                await expect(page.get_by_label("Your name")).to_be_visible()
                field = page.get_by_label("API key")
                # the list is drawn once `GET /me` has answered, so the field is as it stays
                await (expect(field).to_be_visible() if asks else expect(field).to_be_hidden())
            finally:
                await context.close()


async def test_at_phone_width_a_deep_link_opens_the_card_and_approves(
    browser: Browser, http: httpx.AsyncClient, count_orders: Callable[[str], int]
) -> None:
    key = new_key()
    interaction = await asking(http, key, "DELETE FROM orders WHERE id = 4")
    context = await browser.new_context(
        viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True, base_url=str(http.base_url)
    )
    page = await context.new_page()
    try:
        await page.goto(f"/ui/#/sessions/{key}?interaction={interaction}")
        approve = page.locator(f'article[data-interaction="{interaction}"]').get_by_role(
            "button", name="Approve once"
        )
        await expect(approve).to_be_focused()
        box = await approve.bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 390, box
        width = await page.evaluate("document.documentElement.scrollWidth")
        assert width <= 390, f"the page scrolls sideways at phone width ({width} px)"
        await shot(page, "phone-card")
        await approve.tap()
        await expect(page.locator(".conversation")).to_contain_text("1 row affected")
        assert count_orders("id = 4") == 0
    finally:
        await context.close()


FOCUSED = """() => {
  const e = document.activeElement;
  const style = getComputedStyle(e);
  return {
    tag: e.tagName, text: (e.textContent || "").trim().slice(0, 60), id: e.id,
    outline: style.outlineStyle, width: parseFloat(style.outlineWidth),
  };
}"""
"""What has the focus, and the outline that shows it."""


async def tab_to(page: Page, wanted: Callable[[dict[str, Any]], bool], what: str) -> list[str]:
    """Press Tab until `wanted` has the focus (at most 60 times); every stop had a visible outline.
    The stops passed on the way."""
    stops: list[str] = []
    for _ in range(60):
        await page.keyboard.press("Tab")
        focused: dict[str, Any] = await page.evaluate(FOCUSED)
        if focused["tag"] == "BODY":
            continue
        stops.append(f"{focused['tag']} {focused['text'] or focused['id']}")
        assert focused["outline"] != "none" and focused["width"] >= 2, f"focus not visible on {stops[-1]}"
        if wanted(focused):
            return stops
    raise AssertionError(f"{what} never took the focus; Tab went through {stops}")


async def test_a_keyboard_alone_finds_the_session_and_approves_with_the_focus_always_visible(
    page: Page, http: httpx.AsyncClient, count_orders: Callable[[str], int]
) -> None:
    key = new_key()
    await asking(http, key, "DELETE FROM orders WHERE id = 6")
    await page.goto("/ui/#/sessions")
    await expect(page.get_by_role("link", name=key)).to_be_visible()
    await tab_to(page, lambda f: f["text"] == "Skip to content", "the skip link")
    await expect(page.get_by_role("link", name="Skip to content")).to_be_in_viewport()
    await page.keyboard.press("Enter")
    await expect(page.locator("main")).to_be_focused()
    await expect(page.get_by_role("heading", name="Sessions")).to_be_visible()  # still the same page
    await tab_to(page, lambda f: f["tag"] == "A" and f["text"] == key, "the session's link")
    await page.keyboard.press("Enter")
    await expect(page.get_by_role("heading", name=f"Session {key}")).to_be_visible()
    card = page.locator("article.card")
    await expect(card).to_have_count(1)
    await tab_to(page, lambda f: f["tag"] == "BUTTON" and f["text"] == "Approve once", "Approve once")
    await shot(page, "keyboard-focus")
    await page.keyboard.press("Enter")
    await expect(page.locator(".conversation")).to_contain_text("1 row affected")
    assert count_orders("id = 6") == 0


@pytest.mark.parametrize("width,height", [(1280, 800), (390, 844)])
async def test_axe_finds_no_serious_violation(
    browser: Browser, http: httpx.AsyncClient, width: int, height: int
) -> None:
    key = new_key()
    await asking(http, key, "DELETE FROM orders WHERE id = 5")
    graph = await http.post("/graphs", json={"blueprint": {"new_tasks": [gated("deploy")], "new_edges": []}})
    assert graph.status_code == 201, graph.text
    gid = graph.json()["graph_id"]
    context = await browser.new_context(
        viewport={"width": width, "height": height}, base_url=str(http.base_url)
    )
    page = await context.new_page()
    try:
        for where, ready in (
            ("/ui/#/sessions", "table"),
            (f"/ui/#/sessions/{key}", "article.card"),
            ("/ui/#/graphs", "table"),
            (f"/ui/#/graphs/{gid}", "article.card"),
        ):
            await page.goto(where)
            await expect(page.locator(ready).first).to_be_visible()
            results = await Axe().run(page)
            serious = [
                f"{v['id']} ({v['impact']}): {v['help']} at {[n['target'] for n in v['nodes']]}"
                for v in results.response["violations"]
                if v["impact"] in ("serious", "critical")
            ]
            assert serious == [], f"{where} at {width}x{height}"
    finally:
        await context.close()
