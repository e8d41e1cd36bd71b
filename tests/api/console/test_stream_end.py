"""A page whose session or graph has ended says so and stops following its stream: the API ends a
complete stream with an `end` event (and answers a resume that misses nothing with 204, which stops
a browser's EventSource too), and the page asks for it no more (before, it asked again every
few seconds for as long as it was open, flipping between "Reconnecting…" and "Live"). A cancelled
session shows no message box; one that ended otherwise is started again by a message sent from the
page, which then follows its new run."""

from __future__ import annotations

import asyncio
import time

import httpx
from playwright.async_api import Page, Request, expect
from temporalio.client import Client

from workflows.identity.ids import session_workflow_id

from ...workflows.graph.flows import task
from ..test_graphs import submit, wait_graph
from .conftest import noted, shot
from .test_session_page import card_for, open_session, send

QUIET_SECONDS = 2.5
"""How long a page whose stream ended is watched for more requests of it: the page's old back-off
(0.5, 1, 2, 4 s) asked twice in that while, and an EventSource (`retry: 1000`) twice too."""


def stream_requests(page: Page) -> list[str]:
    """The `/events` requests the page makes from now on (a list that fills as they come)."""

    def stream(request: Request) -> str | None:
        return request.url if "/events" in request.url else None

    return noted(page, "request", stream)


async def assert_no_more(made: list[str], what: str) -> None:
    """No request is added to `made` for `QUIET_SECONDS` (looked at every half second: the first
    one fails the test at once)."""
    had = len(made)
    deadline = time.monotonic() + QUIET_SECONDS
    while time.monotonic() < deadline:
        assert len(made) == had, f"{what}: the page asked for its stream again: {made[had:]}"
        await asyncio.sleep(0.5)


async def test_a_cancelled_session_says_it_ended_and_stops_following_its_stream(
    page: Page, http: httpx.AsyncClient
) -> None:
    made = stream_requests(page)
    key, _ = await card_for(page, http, "DELETE FROM orders WHERE id = 5")

    cancelled = await http.post(f"/sessions/{key}/cancel", json={"reason": "wrong table", "principal": "bob"})
    assert cancelled.status_code == 200, cancelled.text

    await expect(page.locator("#connection")).to_have_text("Session ended")
    await expect(page.locator("#session-ended")).to_have_text(
        "This session was cancelled: it takes no more messages."
    )
    await expect(page.locator("article.card")).to_have_count(0)
    await expect(page.get_by_role("textbox", name="Message", exact=True)).to_be_hidden()
    await expect(page.get_by_role("button", name="Send")).to_be_hidden()
    who_decided = page.get_by_role("region", name="Who decided what")
    await expect(who_decided).to_contain_text("denied by system:cancel")
    await shot(page, "session-ended")
    await assert_no_more(made, "a cancelled session")
    await expect(page.locator("#connection")).to_have_text("Session ended")

    await page.reload()  # opened after it ended: its stream is read to the end, once
    await expect(page.locator("#connection")).to_have_text("Session ended")
    await expect(page.locator(".conversation")).to_contain_text("DELETE FROM orders WHERE id = 5")
    await expect(who_decided).to_contain_text("denied by system:cancel")
    await assert_no_more(made, "a cancelled session opened again")


async def test_a_finished_graph_says_it_ended_and_stops_following_its_stream(
    page: Page, http: httpx.AsyncClient
) -> None:
    made = stream_requests(page)
    created = await submit(http, {"new_tasks": [task("only")], "new_edges": []})
    gid = created["graph_id"]
    await wait_graph(http, gid, lambda v: v.status == "completed", "the graph completed")
    await page.goto(f"/ui/#/graphs/{gid}")
    await expect(page.locator("#connection")).to_have_text("Graph ended")
    await expect(page.locator('.task-node[data-task="only"]')).to_have_attribute("data-status", "completed")
    await assert_no_more(made, "a completed graph")


async def test_the_api_ends_a_complete_stream_and_answers_a_resume_past_it_with_204(
    http: httpx.AsyncClient,
) -> None:
    created = await submit(http, {"new_tasks": [task("only")], "new_edges": []})
    gid = created["graph_id"]
    await wait_graph(http, gid, lambda v: v.status == "completed", "the graph completed")
    reply = await http.get(f"/graphs/{gid}/events")  # from the start: every chunk, then `end`
    assert reply.status_code == 200, reply.text
    *chunks, last = reply.text.strip().split("\n\n")
    assert last.startswith("event: end\ndata: "), reply.text[-300:]
    assert f'"detail": "graph:{gid} has ended; its stream is complete"' in last
    final = max(int(line[4:]) for frame in chunks for line in frame.split("\n") if line.startswith("id: "))
    assert f'"last_event_id": {final}' in last
    for after in (final, final + 100):  # resumed with nothing missing: 204, what stops an EventSource
        resumed = await http.get(f"/graphs/{gid}/events", params={"after": after})
        assert resumed.status_code == 204, resumed.text
    partial = await http.get(f"/graphs/{gid}/events", headers={"Last-Event-ID": str(final - 1)})
    assert partial.status_code == 200 and f"id: {final}\n" in partial.text  # the one chunk missing
    assert partial.text.strip().split("\n\n")[-1].startswith("event: end\n")


async def test_a_message_to_a_session_that_ended_starts_it_again_and_the_page_follows_it(
    page: Page, http: httpx.AsyncClient, client: Client
) -> None:
    made = stream_requests(page)
    key = await open_session(page, http)
    await client.get_workflow_handle(session_workflow_id(key)).terminate(reason="stopped by the on-call")
    await expect(page.locator("#connection")).to_have_text("Session ended")
    await expect(page.locator("#session-ended")).to_have_text(
        "This session has ended (terminated). A message starts it again as a new conversation."
    )
    await assert_no_more(made, "a terminated session")

    await send(page, "SELECT 3 AS n")  # the message box stays: this starts a new run
    await expect(page.locator("#connection")).to_have_text("Live")
    await expect(page.locator(".conversation")).to_contain_text("SELECT returned 1 row")
    await expect(page.locator("#session-ended")).to_be_hidden()
    await expect(page.locator("#session-status")).to_contain_text("active")
