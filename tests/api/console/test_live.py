"""The console stays live: a dropped connection is shown and resumed without losing or repeating
a chunk, the sessions page lists what waits for the person watching, and a request that starts
waiting while the page is in the background raises a browser notification."""

from __future__ import annotations

import httpx
from playwright.async_api import Browser, expect

from ...conftest import assert_eventually
from ...gateway import Gateway
from ..test_sessions import new_key
from .test_access import asking
from .test_session_page import open_session, send


async def test_a_dropped_stream_is_shown_then_resumed_without_a_gap_or_a_repeat(
    browser: Browser, http: httpx.AsyncClient
) -> None:
    gateway = Gateway(http.base_url.port or 80)
    await gateway.restore()
    context = await browser.new_context(base_url=gateway.url)
    page = await context.new_page()
    try:
        key = await open_session(page, http)
        await send(page, "DELETE FROM orders WHERE id = 6")
        card = page.locator("article.card")
        await expect(card).to_have_count(1)
        interaction = await card.get_attribute("data-interaction")

        await gateway.cut()
        await expect(page.locator("#connection")).to_have_text("Reconnecting…")
        decided = await http.post(
            f"/sessions/{key}/interactions/{interaction}", json={"approved": True, "principal": "bob"}
        )
        assert decided.status_code == 200, decided.text
        await gateway.restore()

        await expect(page.locator("#connection")).to_have_text("Live", timeout=30_000)
        line = page.locator(".conversation > li", has_text=f"✓ {interaction} approved by bob (http)")
        await expect(line).to_have_count(1)
        await expect(page.locator(".conversation")).to_contain_text("DELETE done: 1 row affected.")
        await expect(page.locator(".conversation > li", has_text="DELETE done")).to_have_count(1)
        await expect(
            page.locator(".conversation > li", has_text="DELETE FROM orders WHERE id = 6")
        ).to_have_count(2)
    finally:
        await context.close()
        await gateway.cut()


async def test_waiting_for_me_lists_only_what_the_person_may_answer(
    browser: Browser, http: httpx.AsyncClient
) -> None:
    mine, bobs = new_key(), new_key()
    await asking(http, mine, "DELETE FROM orders WHERE id = 7")
    await asking(http, bobs, "DELETE FROM orders WHERE id = 8", approvers=["bob"])
    await assert_eventually(  # Temporal's visibility, which lists sessions, follows a moment later
        lambda: http.get("/sessions", params={"waiting": True, "limit": 500}),
        lambda got: {mine, bobs} <= {s["session_key"] for s in got.json()},
        what="both sessions listed as waiting",
    )
    context = await browser.new_context(base_url=str(http.base_url))
    page = await context.new_page()
    try:
        await page.goto("/ui/#/sessions")
        await page.get_by_label("Your name").fill("carol")
        await page.get_by_role("button", name="Use").click()
        await expect(page.get_by_role("link", name=bobs)).to_be_visible()
        await page.get_by_label("Waiting for me").check()
        await expect(page.get_by_role("table")).to_contain_text("Sessions waiting for carol")
        # Each waiting session is asked who may answer; those of finished tests, whose workers are
        # gone, take the 2 s a session has to say before they are listed anyway.
        await expect(page.get_by_role("link", name=mine)).to_be_visible(timeout=30_000)
        await expect(page.get_by_role("link", name=bobs)).to_have_count(0)
        await page.get_by_role("link", name=mine).click()
        await expect(page.get_by_role("heading", name=f"Session {mine}")).to_be_visible()
    finally:
        await context.close()


async def test_a_new_request_in_a_background_tab_raises_a_notification(
    browser: Browser, http: httpx.AsyncClient
) -> None:
    context = await browser.new_context(base_url=str(http.base_url))
    await context.grant_permissions(["notifications"])
    await context.add_init_script(
        """
        Object.defineProperty(document, "hidden", { get: () => true });
        window.shown = [];
        window.Notification = class { constructor(title, options) { window.shown.push([title, options.body]); } };
        window.Notification.permission = "granted";
        """
    )
    page = await context.new_page()
    try:
        key = await open_session(page, http)
        await send(page, "DELETE FROM orders WHERE id = 9")
        await expect(page.locator("article.card")).to_have_count(1)
        shown = await page.evaluate("window.shown")
        assert shown == [[f"Synapse: {key} waits for you", "tool_1: tool_approval"]]
    finally:
        await context.close()
