"""The console's "Allow always…" in a real browser: it proposes the narrowest place there is and says
it in words before saving (a session of a person: their sessions, recorded as made by the name typed
in; a session of neither project nor person: this session only, approved with a grant, no rule), only
an admin can pick every session, and a rule is saved only once its call's approval was taken."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from playwright.async_api import Browser, Locator, Page, expect
from temporalio.client import Client

from api.main import create_app
from core.settings import ApiSettings, Settings

from ...support import serve
from ..test_sessions import new_key

WAITING = "DELETE FROM orders WHERE id = 1"
KEYS = "k-approve:alice:approver,k-admin:ada:admin"


async def waiting_card(
    page: Page, http: httpx.AsyncClient, headers: dict[str, str] | None = None, **config: Any
) -> tuple[str, Locator]:
    """A new session (`config`: its settings) asking to run `WAITING`, open in the console; its key and card."""
    key = new_key()
    created = await http.post("/sessions", json={"session_key": key, **config}, headers=headers)
    assert created.status_code == 201, created.text
    await page.goto(f"/ui/#/sessions/{key}")
    await expect(page.locator("#connection")).to_have_text("Live")
    await page.get_by_role("textbox", name="Message", exact=True).fill(WAITING)
    await page.get_by_role("button", name="Send").click()
    card = page.locator("article.card")
    await expect(card).to_have_count(1)
    await card.get_by_role("button", name="Allow always…").click()
    return key, card


async def who_i_am(page: Page, name: str, key: str = "") -> None:
    await page.goto("/ui/")
    await page.get_by_label("Your name").fill(name)
    if key:  # the field shows only when the API asks for keys
        await page.get_by_label("API key").fill(key)
    await page.get_by_role("button", name="Use").click()


def places(card: Locator) -> Locator:
    return card.get_by_label("Where").locator("option")


async def test_a_persons_session_offers_their_sessions_and_records_the_name_typed_in(
    page: Page, http: httpx.AsyncClient
) -> None:
    await who_i_am(page, "alice")
    _, card = await waiting_card(page, http, user="alice")
    await expect(card).to_contain_text(
        "Allow sql calls with this SQL kind and table in alice's sessions, without asking."
    )
    await card.get_by_role("button", name="Save rule and approve").click()
    await expect(page.locator("article.card")).to_have_count(0)
    rules = (await http.get("/rules")).json()
    assert [(r["scope"], r["user"], r["project"], r["created_by"]) for r in rules] == [
        ("user", "alice", None, "alice")
    ], "the name typed in, not anonymous; not a global rule"


async def test_a_session_of_no_project_or_person_is_allowed_in_this_session_only_by_a_grant(
    page: Page, http: httpx.AsyncClient
) -> None:
    await who_i_am(page, "alice")
    key, card = await waiting_card(page, http)
    await expect(card).to_contain_text(
        "Allow sql calls with this SQL kind and table in this session only, without asking."
    )
    await expect(card.get_by_label("SQL kind and table")).to_be_hidden()
    await card.get_by_role("button", name="Approve in this session only").click()
    await expect(page.locator("article.card")).to_have_count(0)
    await expect(page.locator(".conversation")).to_contain_text("1 row affected")
    assert (await http.get("/rules")).json() == [], "no rule: a grant"
    grants = (await http.get(f"/sessions/{key}/grants")).json()["grants"]
    assert [(g["scope"], g["head"], g["granted_by"]) for g in grants] == [
        ("session_prefix", "DELETE orders", "alice")
    ], "the request offered session_prefix"


async def test_an_admin_may_pick_every_session_and_the_wording_follows(
    page: Page, http: httpx.AsyncClient
) -> None:
    await who_i_am(page, "ada")  # keys off: everyone is an admin
    _, card = await waiting_card(page, http, project="/shop")
    await expect(places(card)).to_have_text(["project /shop", "this session only", "every session"])
    await expect(card).to_contain_text("in project /shop, without asking.")
    await card.get_by_label("Where").select_option(label="every session")
    await expect(card).to_contain_text(
        "Allow sql calls with this SQL kind and table in every session, without asking."
    )
    await card.get_by_role("button", name="Save rule and approve").click()
    await expect(page.locator("article.card")).to_have_count(0)
    rules = (await http.get("/rules")).json()
    assert [(r["scope"], r["project"], r["created_by"]) for r in rules] == [("global", None, "ada")]


async def test_a_refused_approval_saves_no_rule(
    page: Page, http: httpx.AsyncClient, count_orders: Any
) -> None:
    """Mallory is not among the session's approvers: her "Allow always" is refused like her approval,
    and no rule is saved that would let the next call run unasked."""
    await who_i_am(page, "mallory")
    _, card = await waiting_card(page, http, user="alice", approvers=["oscar"])
    await card.get_by_role("button", name="Save rule and approve").click()
    await expect(card).to_contain_text("Not sent:")
    await expect(card).to_contain_text("mallory")
    assert (await http.get("/rules")).json() == [], "a refused approval saved nothing"
    assert count_orders("id = 1") == 1, "nothing ran"


@pytest.fixture
async def keyed(client: Client, settings: Settings, worker: None) -> AsyncIterator[httpx.AsyncClient]:
    """The API with API keys on (an approver and an admin)."""
    async with serve(
        create_app(settings.model_copy(update={"api": ApiSettings(keys=KEYS)}), client=client)
    ) as http:
        yield http


async def test_an_approver_is_never_offered_every_session(browser: Browser, keyed: httpx.AsyncClient) -> None:
    context = await browser.new_context(base_url=str(keyed.base_url))
    page = await context.new_page()
    try:
        await who_i_am(page, "someone", "k-approve")
        await expect(page.locator("#whoami")).to_have_text("alice (approver)")
        _, card = await waiting_card(page, keyed, {"Authorization": "Bearer k-approve"}, project="/shop")
        await expect(places(card)).to_have_text(["project /shop", "this session only"])
        await card.get_by_role("button", name="Save rule and approve").click()
        await expect(page.locator("article.card")).to_have_count(0)
        rules = (await keyed.get("/rules", headers={"Authorization": "Bearer k-approve"})).json()
        assert [(r["scope"], r["project"], r["created_by"]) for r in rules] == [("project", "/shop", "alice")]
    finally:
        await context.close()
