"""Content the API serves, in a real Chromium: an uploaded HTML page or an SVG with `onload` never
runs in the API's origin (it downloads, and is framed nowhere), and the API docs still work under
their own Content-Security-Policy (issue 47)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from playwright.async_api import Browser, Error, Page, expect
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route
from temporalio.client import Client

from api.main import create_app
from core.settings import Settings

from ...conftest import assert_eventually
from ...support import running, serve
from .conftest import refusals


class Listener:
    """A loopback HTTP server that notes the path of every request it gets."""

    def __init__(self) -> None:
        self.hits: list[str] = []
        self.url = ""

    async def hit(self, request: Request) -> PlainTextResponse:
        self.hits.append(request.url.path)
        return PlainTextResponse("ok", headers={"Access-Control-Allow-Origin": "*"})


@pytest.fixture
async def listener() -> AsyncIterator[Listener]:
    listening = Listener()
    app = Starlette(routes=[Route("/{path:path}", listening.hit)])
    async with running(app) as url:
        listening.url = url
        yield listening


@pytest.fixture
async def api(client: Client, settings: Settings) -> AsyncIterator[httpx.AsyncClient]:
    """The API alone (no worker: nothing here runs a workflow)."""
    async with serve(create_app(settings, client=client)) as http:
        yield http


def base(api: httpx.AsyncClient) -> str:
    return str(api.base_url).rstrip("/")


def active(kind: str, listener: Listener, path: str) -> tuple[str, str, str]:
    """An upload whose script, if it ever runs, renames the page and calls the listener at `path`."""
    ran = (
        f"document.title='ran'; fetch('{listener.url}/{path}', {{mode: 'no-cors'}}); "
        f"new Image().src = '{listener.url}/{path}-img';"
    )
    if kind == "html":
        return "report.html", "text/html", f"<!doctype html><title>report</title><script>{ran}</script>"
    return (
        "chart.svg",
        "image/svg+xml",
        f'<svg xmlns="http://www.w3.org/2000/svg" onload="{ran}"><script>{ran}</script></svg>',
    )


async def opened(page: Page, url: str) -> list[str]:
    """Open `url` in `page`: the names of the files Chromium downloads from it (filled as they come)."""
    downloads: list[str] = []
    page.on("download", lambda download: downloads.append(download.suggested_filename))
    try:
        await page.goto(url)
    except Error as err:  # `goto` of a download fails, and the download comes
        assert "Download is starting" in err.message, err.message
    return downloads


@pytest.mark.parametrize("kind", ["html", "svg"])
async def test_an_uploaded_active_file_downloads_and_never_runs(
    browser: Browser, api: httpx.AsyncClient, listener: Listener, kind: str
) -> None:
    name, media_type, body = active(kind, listener, "artifact")
    uploaded = await api.post(
        "/artifacts", params={"name": name}, content=body, headers={"content-type": media_type}
    )
    assert uploaded.status_code == 201, uploaded.text
    url = f"{base(api)}/artifacts/{uploaded.json()['artifact_id']}"
    context = await browser.new_context(accept_downloads=True)
    try:
        page = await context.new_page()
        await page.goto(f"{base(api)}/ui/")  # a tab of the API's origin, as the console's
        downloaded = await opened(page, url)
        framing = await context.new_page()
        await framing.set_content(f'<iframe src="{url}"></iframe><object data="{url}"></object>')
        await framing.wait_for_load_state()

        control = await context.new_page()  # the same script, where it may run: proves it would be seen
        _, _, script = active(kind, listener, "control")
        await control.set_content(script if kind == "html" else f"<body>{script}</body>")
        await assert_eventually(
            lambda: _seen(listener), lambda hits: "/control" in hits, what="the control page's script"
        )
        titles = [await each.title() for each in (page, framing)]
        ran = [hit for hit in listener.hits if hit.startswith("/artifact")]
        assert not ran and "ran" not in titles, f"the upload's script ran: {ran}, {titles}"
        await assert_eventually(
            lambda: _seen(downloaded), lambda names: bool(names), what="Chromium downloading the file"
        )
    finally:
        await context.close()

    assert downloaded == [name], "Chromium downloads the file rather than showing it"


async def _seen(listener: Listener | list[str]) -> list[str]:
    return list(listener.hits if isinstance(listener, Listener) else listener)


@pytest.mark.parametrize(
    ("path", "shown"),
    [("/docs", ".swagger-ui .info .title"), ("/redoc", "redoc h1")],
)
async def test_the_api_docs_work_under_their_policy(
    browser: Browser, api: httpx.AsyncClient, path: str, shown: str
) -> None:
    context = await browser.new_context(base_url=str(api.base_url))
    try:
        page = await context.new_page()
        refused = refusals(page)
        failed: list[Any] = []
        page.on("pageerror", lambda error: failed.append(error))
        response = await page.goto(path)
        assert (
            response is not None and "frame-ancestors 'none'" in response.headers["content-security-policy"]
        )
        await expect(page.locator(shown).first).to_contain_text("Synapse")
        await expect(page.get_by_text("/sessions/{key}/messages").first).to_be_attached()
    finally:
        await context.close()

    # ReDoc's sidebar names its maker with a logo from its CDN: the policy keeps it off, as it should.
    assert not [refusal for refusal in refused if "cdn.redoc.ly" not in refusal], refused
    assert not failed, failed
