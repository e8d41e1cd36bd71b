"""The console's graph page in a real browser: the diagram follows the tasks live (a gate approved
on its card lets the next task run), a notification's deep link to one of two gates opens at that
gate's card on a phone, and a rollback with new input started from the page shows its new version
(said in words); input that breaks the contract is refused before it is sent. A task's text output
reads as text, and the graph list names each graph by its first task."""

from __future__ import annotations

import httpx
from playwright.async_api import Browser, Page, expect

from core.settings import Settings

from ...conftest import assert_eventually
from ...workflows.graph.flows import edge, gated, task
from ..test_graphs import submit, wait_graph
from .conftest import shot


def node(page: Page, task_id: str):  # type: ignore[no-untyped-def]
    return page.locator(f'.task-node[data-task="{task_id}"]')


async def test_the_diagram_follows_a_gate_approved_on_the_page(page: Page, http: httpx.AsyncClient) -> None:
    created = await submit(
        http,
        {
            "new_tasks": [task("fetch", input_data={"echo": "rows"}), gated("publish")],
            "new_edges": [edge("fetch", "publish")],
        },
    )
    gid = created["graph_id"]
    await page.goto(f"/ui/#/graphs/{gid}")
    await expect(node(page, "fetch")).to_have_attribute("data-status", "completed")
    await expect(node(page, "publish")).to_have_attribute("data-status", "waiting")
    card = page.locator("article.card")
    await expect(card).to_contain_text("Graph task publish waits")
    await shot(page, "graph-gate")

    await card.get_by_role("button", name="Approve once").click()

    await expect(node(page, "publish")).to_have_attribute("data-status", "completed")
    await expect(page.locator("article.card")).to_have_count(0)
    await expect(page.get_by_role("list").last).to_contain_text("publish")


async def test_a_deep_link_to_a_graph_gate_opens_its_card_on_a_phone(
    browser: Browser, http: httpx.AsyncClient
) -> None:
    created = await submit(http, {"new_tasks": [gated("drop"), gated("deploy")], "new_edges": []})
    gid = created["graph_id"]
    view = await wait_graph(http, gid, lambda v: len(v.pending_interactions) == 2, "both gates open")
    deploy = next(r for r in view.pending_interactions if "deploy" in str(r.content))
    link = Settings(console_url=f"{http.base_url}/ui/", _env_file=None).console_link(
        f"graph:{gid}", deploy.interaction_id
    )  # as a Lark card or a webhook notification carries it
    context = await browser.new_context(
        viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True, base_url=str(http.base_url)
    )
    page = await context.new_page()
    try:
        await page.goto(link)
        card = page.locator(f'article[data-interaction="{deploy.interaction_id}"]')
        await expect(card).to_contain_text("Graph task deploy waits")
        await expect(card.get_by_role("button", name="Approve once")).to_be_focused()
        await expect(node(page, "drop")).to_be_visible()  # the diagram and the task table are drawn
        width = await page.evaluate("document.documentElement.scrollWidth")
        assert width <= 390, f"the graph page scrolls sideways at phone width ({width} px)"
        await shot(page, "phone-graph-gate")
        await card.get_by_role("button", name="Approve once").tap()
        await expect(node(page, "deploy")).to_have_attribute("data-status", "completed")
        await expect(node(page, "drop")).to_have_attribute("data-status", "waiting")
    finally:
        await context.close()


async def test_a_rollback_from_the_page_runs_a_new_version(page: Page, http: httpx.AsyncClient) -> None:
    created = await submit(
        http,
        {
            "new_tasks": [task("first", input_data={"echo": "v1"}), task("second", input_data={})],
            "new_edges": [edge("first", "second", data_flow={"mappings": {"was": "output"}})],
        },
    )
    gid = created["graph_id"]
    await wait_graph(http, gid, lambda v: all(t.status.value == "completed" for t in v.tasks), "both done")
    await page.goto(f"/ui/#/graphs/{gid}")
    await expect(node(page, "second")).to_have_attribute("data-status", "completed")
    await page.get_by_role("button", name="Details of first").click()
    detail = page.locator('section[aria-labelledby="task-h"]')
    await expect(detail.get_by_role("heading", name="Task first")).to_be_visible()

    await detail.get_by_label("New input (JSON object)").fill('{"echo": ')
    await detail.get_by_label("Comment").fill("wrong data")
    await detail.get_by_role("button", name="Roll back").click()
    await expect(detail.get_by_role("status")).to_contain_text("new input: not JSON")
    await detail.get_by_label("New input (JSON object)").fill('{"echo": "v2"}')
    await detail.get_by_role("button", name="Roll back").click()
    await expect(detail.get_by_role("status")).to_have_text(
        "Rollback sent: task first runs again with the new input, as version 2; what follows it runs "
        "again after it."
    )

    await expect(detail.locator('tr[data-version="2"]')).to_contain_text('"echo": "v2"')
    await expect(detail.locator('tr[data-version="1"]')).to_contain_text("superseded")
    await expect(node(page, "second")).to_contain_text("v2")
    final = await wait_graph(
        http,
        gid,
        lambda v: {t.task_id: (t.version, t.status.value) for t in v.tasks}["second"] == (2, "completed"),
    )
    assert {t.task_id: t.output for t in final.tasks}["second"] == {"was": "v2"}
    audit = await http.get(f"/graphs/{gid}/audit")
    assert audit.status_code == 200, audit.text
    entries = audit.json()["entries"]
    assert [(e["kind"], e["comment"]) for e in entries if e["kind"] == "rollback_and_modify"] == [
        ("rollback_and_modify", "task 'first': wrong data")
    ], "the rollback is in the graph's audit"
    await expect(page.locator('section[aria-labelledby="graph-audit-h"]')).to_contain_text("wrong data")
    listed = await assert_eventually(
        lambda: http.get("/graphs", params={"limit": 500}),
        lambda got: [g["status"] for g in got.json() if g["graph_id"] == gid] == ["completed"],
        what="the reopened graph listed once, as its latest run",
    )
    assert listed.status_code == 200
    await page.get_by_role("link", name="Graphs").click()
    await expect(page.get_by_role("row", name=gid)).to_contain_text("completed")
    await expect(page.get_by_role("row", name=gid).get_by_role("link")).to_have_text("first and 1 more task")
    await shot(page, "graph-rollback")


async def test_a_text_output_reads_as_text_and_the_list_names_the_graph(
    page: Page, http: httpx.AsyncClient
) -> None:
    created = await submit(
        http,
        {
            "new_tasks": [task("count", input_data={"sql": "SELECT 2 AS n"}), task("report", input_data={})],
            "new_edges": [edge("count", "report", data_flow={"mappings": {"counted": "output"}})],
        },
    )
    gid = created["graph_id"]
    view = await wait_graph(http, gid, lambda v: v.status == "completed", "the graph completed")
    outputs = {t.task_id: t.output for t in view.tasks}
    text = outputs["count"]
    assert isinstance(text, str) and "\n" in text, text  # text of several lines
    assert outputs["report"] == {"counted": text}
    await page.goto(f"/ui/#/graphs/{gid}")
    detail = page.locator('section[aria-labelledby="task-h"]')
    for task_id in ("count", "report"):  # as it is, not as a JSON string with quotes and escapes
        await page.get_by_role("button", name=f"Details of {task_id}").click()
        await expect(detail.get_by_role("heading", name=f"Task {task_id}")).to_be_visible()
        shown = detail.locator('tr[data-version="1"] td').last
        await expect(shown.locator("pre")).to_have_text(text)
        assert '"' not in await shown.inner_text() and "\\n" not in await shown.inner_text()
    await expect(detail.locator('tr[data-version="1"] td dt')).to_have_text("counted")  # report's field
    await shot(page, "graph-text-output")
    listed = await assert_eventually(
        lambda: http.get("/graphs", params={"limit": 500}),
        lambda got: [g["title"] for g in got.json() if g["graph_id"] == gid] == ["count and 1 more task"],
        what="the graph listed by its first task",
    )
    assert listed.status_code == 200
    await page.get_by_role("link", name="Graphs").click()
    await expect(page.get_by_role("row", name=gid).get_by_role("link")).to_have_text("count and 1 more task")
    await shot(page, "graph-list-titles")
