"""The console's session page in a real browser: a DELETE asked for on a card, denied with a
reason, asked again and approved, its result streamed in; a denial with no reason, in the console
as over HTTP; arguments that are not JSON refused at their box; a decision made over HTTP closing the
card in the open page without a reload; "Allow always" saving the project's rule, edited, that
lets the next such call run unasked; a card showing the characters that print nothing escaped."""

from __future__ import annotations

import json
from collections.abc import Callable

import httpx
from playwright.async_api import Locator, Page, expect

from core.visible import visible

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


async def card_for(page: Page, http: httpx.AsyncClient, sql: str) -> tuple[str, Locator]:
    """A new session opened in the console, asked `sql`: its key, and the card that asks for it."""
    key = await open_session(page, http)
    await send(page, sql)
    card = page.locator("article.card")
    await expect(card).to_have_count(1)
    return key, card


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


async def test_a_denial_needs_no_reason_in_the_console_as_over_http(
    page: Page, http: httpx.AsyncClient, count_orders: Callable[[str], int]
) -> None:
    key = await open_session(page, http)
    before = count_orders("id = 2")
    await send(page, "DELETE FROM orders WHERE id = 2")
    card = page.locator("article.card")
    await expect(card.get_by_label("Reason (optional")).to_have_value("")
    await card.get_by_role("button", name="Deny").click()  # no reason given
    await expect(page.locator("article.card")).to_have_count(0)
    await expect(page.locator(".conversation")).to_contain_text("denied by")

    await send(page, "DELETE FROM orders WHERE id = 2")  # the other door: HTTP, no user_message
    await expect(page.locator("article.card")).to_have_count(1)
    interaction = await page.locator("article.card").get_attribute("data-interaction")
    denied = await http.post(
        f"/sessions/{key}/interactions/{interaction}", json={"approved": False, "principal": "bob"}
    )
    assert denied.status_code == 200, denied.text
    await expect(page.locator("article.card")).to_have_count(0)
    await expect(page.locator(".conversation")).to_contain_text(f"{interaction} denied by bob (http)")
    assert count_orders("id = 2") == before, "neither denied DELETE deleted anything"
    trail = (await http.get(f"/sessions/{key}/audit")).json()["entries"]
    denials = [(e["principal"], e["comment"]) for e in trail if e["kind"] == "denied"]
    assert [principal for principal, _ in denials] == ["anonymous", "bob"], trail
    assert all(not comment for _, comment in denials), "no reason was given either time"


async def test_arguments_that_are_not_json_are_refused_at_their_box(
    page: Page, http: httpx.AsyncClient
) -> None:
    _, card = await card_for(page, http, "DELETE FROM orders WHERE id = 13")
    await card.get_by_role("button", name="Edit arguments").click()
    editor = card.get_by_label("Arguments (JSON)")
    await editor.fill('{"sql": ')
    await card.get_by_role("button", name="Approve with these arguments").click()
    problem = card.get_by_role("alert")
    await expect(problem).to_contain_text("The arguments are not JSON")
    await expect(editor).to_be_focused()
    await expect(editor).to_have_attribute("aria-invalid", "true")
    box, said, deny = (
        await editor.bounding_box(),
        await problem.bounding_box(),
        await card.get_by_role("button", name="Deny").bounding_box(),
    )
    assert box and said and deny
    assert 0 <= said["y"] - (box["y"] + box["height"]) < 40, "the complaint sits right under the box"
    assert said["y"] < deny["y"], "above the card's other buttons, not below Deny"
    await shot(page, "arguments-not-json")
    await editor.fill('{"sql": "DELETE FROM orders WHERE id = 14"}')
    await expect(problem).to_have_text("")  # the complaint goes with the edit
    await expect(page.locator("article.card")).to_have_count(1)


async def test_a_decision_over_http_closes_the_card_in_the_open_page(
    page: Page, http: httpx.AsyncClient, count_orders: Callable[[str], int]
) -> None:
    key, card = await card_for(page, http, "DELETE FROM orders WHERE id = 2")
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
    key, card = await card_for(page, http, "DELETE FROM orders WHERE id = 3")
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


VISIBLE = [
    ("rm -rf /tmp/x\u202e y", False, r"rm -rf /tmp/x\u202e y"),
    ("a\x9b2Jb\x85c", False, r"a\x9b2Jb\x85c"),
    ("a\u200b\u200c\u200d\ufeffb", False, r"a\u200b\u200c\u200d\ufeffb"),
    ("a\u2028b\u2066\U000e0041", False, r"a\u2028b\u2066\U000e0041"),
    ("lines\nand\ttabs, 中文\u3000, a\u00a0b", False, "lines\nand\ttabs, 中文\u3000, a\u00a0b"),
    ('{"c": "a\x9b\U000e0041"}', True, r'{"c": "a\u009b\udb40\udc41"}'),
]
"""The console's `visible` (render.js), as the Python renderers' `core.visible` writes the same
characters; `json`: escapes JSON reads back."""


async def test_a_card_shows_every_character_that_prints_nothing_escaped(
    page: Page, http: httpx.AsyncClient
) -> None:
    _, card = await card_for(page, http, "DELETE FROM orders WHERE id = 4 AND 'a\u200b\u202e\x9bb' <> ''")
    await expect(card).to_contain_text(r"'a\u200b\u202e\x9bb'")
    assert not {"\u200b", "\u202e", "\x9b"} & set(await card.inner_text())
    edited = await card.get_by_label("Arguments (JSON)").input_value()
    assert json.loads(edited) == {"sql": "DELETE FROM orders WHERE id = 4 AND 'a\u200b\u202e\x9bb' <> ''"}
    assert "\\u202e" in edited, "the arguments a person edits are escaped too, as JSON"

    shown = await page.evaluate(
        """async (rows) => {
            const { visible } = await import("./js/render.js");
            return rows.map(([text, json]) => visible(text, json));
        }""",
        [[text, as_json] for text, as_json, _ in VISIBLE],
    )
    assert shown == [escaped for _, _, escaped in VISIBLE]
    assert [visible(text) for text, as_json, _ in VISIBLE if not as_json] == shown[:-1], "as in Python"
