"""The API docs pages work offline: every script and style they load is served by the app itself."""

from __future__ import annotations

from collections.abc import AsyncIterator
from html.parser import HTMLParser
from urllib.parse import urlsplit

import httpx
import pytest
from temporalio.client import Client

from api.main import create_app
from core.settings import Settings

from ..support import serve

EXPECTED_TYPES = {".js": "text/javascript", ".css": "text/css", ".png": "image/png"}


class Assets(HTMLParser):
    """The URLs a page loads: `<script src>`, `<link href>` (styles, icons) and `<img src>`."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        url = found.get("src") if tag in ("script", "img") else found.get("href") if tag == "link" else None
        if url:
            self.urls.append(url)


def assets_of(html: str) -> list[str]:
    parser = Assets()
    parser.feed(html)
    return parser.urls


@pytest.fixture
async def docs_http(client: Client, settings: Settings) -> AsyncIterator[httpx.AsyncClient]:
    """The app on loopback; the docs need no worker."""
    async with serve(create_app(settings, client=client)) as http:
        yield http


@pytest.mark.parametrize(("page", "scripts"), [("/docs", 1), ("/redoc", 1)])
async def test_a_docs_page_loads_only_what_the_app_serves(
    docs_http: httpx.AsyncClient, page: str, scripts: int
) -> None:
    response = await docs_http.get(page)
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/html")
    html = response.text
    assert "/openapi.json" in html
    urls = assets_of(html)
    assert len([u for u in urls if u.endswith(".js")]) == scripts, urls
    for url in urls:
        parts = urlsplit(url)
        assert not parts.scheme and not parts.netloc, f"{page} loads {url} from another host"
        served = await docs_http.get(url)
        assert served.status_code == 200, f"{url}: {served.status_code}"
        suffix = parts.path[parts.path.rfind(".") :]
        assert served.headers["content-type"].startswith(EXPECTED_TYPES[suffix]), (url, served.headers)
        assert len(served.content) > 0
    assert "fonts.googleapis.com" not in html and "cdn." not in html


async def test_swagger_ui_gets_the_whole_bundle(docs_http: httpx.AsyncClient) -> None:
    urls = assets_of((await docs_http.get("/docs")).text)
    [script] = [u for u in urls if u.endswith(".js")]
    [style] = [u for u in urls if u.endswith(".css")]
    assert b"SwaggerUIBundle" in (await docs_http.get(script)).content
    assert b".swagger-ui" in (await docs_http.get(style)).content


async def test_the_docs_pages_are_not_api_routes(docs_http: httpx.AsyncClient) -> None:
    paths = (await docs_http.get("/openapi.json")).json()["paths"]
    assert not {"/docs", "/redoc"} & set(paths) and not any(p.startswith("/docs-assets") for p in paths)
