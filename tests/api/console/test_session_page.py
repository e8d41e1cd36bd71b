"""The console's session page in a real browser: a DELETE asked for on a card, denied with a
reason, asked again and approved, its result streamed in; a decision made over HTTP closing the
card in the open page without a reload; "Allow always" saving the project's rule, edited, that
lets the next such call run unasked."""

from __future__ import annotations

from collections.abc import Callable

import httpx
from playwright.async_api import Page, expect

from ..test_sessions import new_key
from .conftest import shot


async def open_session(page: Page, http: httpx.AsyncClient, **config: str) -> str:
    """A new session (`config`: more of its settings), opened in the console; its key."""
    key = new_key()
    created = await http.post("/sessions", json={"session_key": key, **config})
    assert created.status_code == 201, created.text
    await page.goto(f"/ui/#/sessions/{key}")
    await expect(page.get_by_role("heading", name=f"Session {key}")).to_be_visible()
    await expect(page.locator("#connection")).to_have_text("Live")
    return key


async def send(page: Page, text: str) -> None:
    await page.get_by_role("textbox", name="Message", exact=True).fill(text)
    await page.get_by_role("button", name="Send").click()


async def test_deny_with_a_reason_then_approve_and_see_the_result(
    page: Page, http: httpx.AsyncClient, count_orders: Callable[[str], int]
) -> None:
    await open_session(page, http)
    before = count_orders("id = 1")
    await send(page, "DELETE FROM orders WHERE id = 1")
    card = page.locator("article.card")
    await expect(card).to_have_count(1)
    await expect(card).to_contain_text("sql wants approval")
    await expect(card).to_contain_text("DELETE FROM orders WHERE id = 1")
    await shot(page, "approval-card")

    await card.get_by_role("button", name="Deny").click()
    await expect(card.get_by_role("status")).to_have_text("Say why you deny it: the agent is told.")
    await card.get_by_label("Reason").fill("not on a Friday")
    await card.get_by_role("button", name="Deny").click()
    await expect(page.locator("article.card")).to_have_count(0)
    await expect(page.locator(".conversation")).to_contain_text("denied by")
    await expect(page.locator(".conversation")).to_contain_text("not on a Friday")
    assert count_orders("id = 1") == before, "a denied DELETE deleted nothing"

    await send(page, "DELETE FROM orders WHERE id = 1")
    card = page.locator("article.card")
    await expect(card).to_have_count(1)
    await card.get_by_role("button", name="Approve once").click()
    await expect(page.locator("article.card")).to_have_count(0)
    await expect(page.locator(".conversation")).to_contain_text("← sql ok: 1 row affected")
    assert count_orders("id = 1") == 0
    await expect(page.locator("aside")).to_contain_text("approved")
    await shot(page, "approved")


async def test_a_decision_over_http_closes_the_card_in_the_open_page(
    page: Page, http: httpx.AsyncClient, count_orders: Callable[[str], int]
) -> None:
    key = await open_session(page, http)
    await send(page, "DELETE FROM orders WHERE id = 2")
    card = page.locator("article.card")
    await expect(card).to_have_count(1)
    interaction = await card.get_attribute("data-interaction")

    decided = await http.post(
        f"/sessions/{key}/interactions/{interaction}",
        json={"approved": True, "principal": "bob", "user_message": "fine"},
    )
    assert decided.status_code == 200, decided.text

    await expect(page.locator("article.card")).to_have_count(0)
    await expect(page.locator(".conversation")).to_contain_text(f"✓ {interaction} approved by bob (http)")
    await expect(page.locator(".conversation")).to_contain_text("1 row affected")
    assert count_orders("id = 2") == 0


async def test_what_a_person_types_on_a_card_survives_the_streams_refreshes(
    page: Page, http: httpx.AsyncClient
) -> None:
    key = await open_session(page, http)
    await send(page, "DELETE FROM orders WHERE id = 3")
    card = page.locator("article.card")
    await card.get_by_label("Reason").fill("half typed")
    await card.get_by_label("Reason").focus()

    paused = await http.post(f"/sessions/{key}/pause", json={"reason": "lunch"})
    assert paused.status_code == 200, paused.text
    await expect(page.locator(".conversation")).to_contain_text("session paused")
    await expect(page.locator("#session-status")).to_contain_text("paused · Agent:demo")  # re-read

    await expect(card.get_by_label("Reason")).to_have_value("half typed")
    await expect(card.get_by_label("Reason")).to_be_focused()


async def test_allow_always_saves_the_edited_rule_and_the_next_such_call_runs_unasked(
    page: Page, http: httpx.AsyncClient, count_orders: Callable[[str], int]
) -> None:
    await open_session(page, http, project="/shop")
    await send(page, "DELETE FROM orders WHERE id = 1")
    card = page.locator("article.card")
    await expect(card).to_have_count(1)
    await card.get_by_role("button", name="Allow always…").click()
    line = card.get_by_label("SQL kind and table")
    await expect(line).to_have_value("DELETE orders")
    await expect(line).to_be_focused()
    await expect(card).to_contain_text("Allow sql calls with this SQL kind and table in project /shop")
    await line.fill("DELETE FROM orders")
    await card.get_by_role("button", name="Save rule and approve").click()
    await expect(card.get_by_role("status")).to_contain_text(
        "The rule was not saved: line: 'DELETE FROM orders'"
    )
    assert (await http.get("/rules")).json() == [], "nothing saved from a bad line"
    await line.fill("delete")
    await expect(card.get_by_role("status")).to_have_text("")  # the complaint goes with the edit
    await shot(page, "allow-always")
    await card.get_by_role("button", name="Save rule and approve").click()
    await expect(page.locator("article.card")).to_have_count(0)
    await expect(page.locator(".conversation")).to_contain_text("← sql ok: 1 row affected")
    rules = (await http.get("/rules")).json()
    assert [(r["scope"], r["project"], r["match"]["sql_kind"], r["match"]["sql_table"]) for r in rules] == [
        ("project", "/shop", "DELETE", None)
    ]
    assert rules[0]["reason"].endswith("in the console")

    await send(page, "DELETE FROM orders WHERE id = 2")
    done = page.locator(".conversation > li", has_text="DELETE done: 1 row affected.")
    await expect(done).to_have_count(2)  # the first DELETE's answer, then the second's
    await expect(page.locator("article.card")).to_have_count(0)
    assert count_orders("id IN (1, 2)") == 0, "the rule let the second DELETE run unasked"
