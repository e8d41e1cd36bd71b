"""Security headers on every response (api/headers.py), and how artifacts are served (issue 47):
every OpenAPI route, the console, the docs, a 404, a 500 carry `nosniff`, `no-referrer` and
`frame-ancestors 'none'`; an artifact of an active type is an attachment in a sandbox."""

from __future__ import annotations

import base64
import os
import re
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from temporalio.client import Client

from api.main import create_app
from core.settings import ApiSettings, Settings

from ..support import serve

BASELINE = {"x-content-type-options": "nosniff", "referrer-policy": "no-referrer", "x-frame-options": "DENY"}
METHODS = ("get", "post", "put", "patch", "delete")


def assert_hardened(response: httpx.Response, what: str) -> None:
    """`response` carries every baseline header and a policy that no other site may frame."""
    for name, value in BASELINE.items():
        assert response.headers.get(name) == value, f"{what}: {name} is {response.headers.get(name)!r}"
    policy = response.headers.get("content-security-policy", "")
    assert "frame-ancestors 'none'" in policy, f"{what}: Content-Security-Policy is {policy!r}"


@pytest.fixture
async def app(client: Client, settings: Settings) -> FastAPI:
    """The API with its codec server on, so its routes are in the walk too."""
    codec = f"k1:{base64.b64encode(os.urandom(32)).decode()}"
    coded = settings.model_copy(
        update={"temporal": settings.temporal.model_copy(update={"codec_keys": codec})}
    )
    return create_app(coded, client=client)


@pytest.fixture
async def http(app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    async with serve(app) as served:
        yield served


def calls(app: FastAPI) -> list[tuple[str, str]]:
    """One call per OpenAPI operation: its method, and its path with `x` for every parameter."""
    return [
        (method.upper(), re.sub(r"\{[^}]+\}", "x", path))
        for path, operations in app.openapi()["paths"].items()
        for method in operations
        if method in METHODS
    ]


async def test_every_route_carries_the_headers(app: FastAPI, http: httpx.AsyncClient) -> None:
    walked = calls(app)
    assert len(walked) > 30, walked
    statuses: dict[str, int] = {}
    for method, path in walked:
        # Headers only: a stream (SSE) is left unread; no body, so most writes answer 4xx.
        async with http.stream(method, path, timeout=30) as response:
            assert_hardened(response, f"{method} {path} ({response.status_code})")
            statuses[f"{method} {path}"] = response.status_code
    assert any(status < 300 for status in statuses.values()), statuses


@pytest.mark.parametrize(
    "path",
    [
        "/ui",
        "/ui/",
        "/ui/js/main.js",
        "/ui/console.css",
        "/ui/nothing.js",
        "/docs",
        "/redoc",
        "/docs-assets/swagger-ui-bundle.js",
        "/openapi.json",
        "/no/such/route",
    ],
)
async def test_pages_files_and_errors_carry_the_headers(http: httpx.AsyncClient, path: str) -> None:
    response = await http.get(path)

    assert_hardened(response, f"GET {path} ({response.status_code})")
    assert "strict-transport-security" not in response.headers, "no HSTS without an https public URL"


async def test_the_console_allows_only_its_own_scripts_and_styles(http: httpx.AsyncClient) -> None:
    policy = (await http.get("/ui/")).headers["content-security-policy"]
    directives = dict(part.strip().split(" ", 1) for part in policy.split(";"))

    assert directives["default-src"] == "'self'"
    assert directives["script-src"] == "'self'" and directives["style-src"] == "'self'"
    assert directives["object-src"] == "'none'" and directives["base-uri"] == "'none'"


async def test_a_500_carries_the_headers(app: FastAPI) -> None:
    @app.get("/boom", include_in_schema=False)
    async def boom() -> None:
        raise RuntimeError("a bug")

    async with httpx.AsyncClient(transport=httpx.ASGITransport(app, raise_app_exceptions=False)) as http:
        response = await http.get("http://api/boom")

    assert response.status_code == 500
    assert_hardened(response, "GET /boom (500)")


async def test_an_https_public_url_turns_hsts_on(client: Client, settings: Settings) -> None:
    public = settings.model_copy(update={"api": ApiSettings(public_url="https://synapse.example.org")})
    async with serve(create_app(public, client=client)) as http:
        for path in ("/ui/", "/no/such/route", "/openapi.json"):
            response = await http.get(path)
            assert response.headers["strict-transport-security"] == "max-age=31536000; includeSubDomains"


async def test_a_stream_still_streams_through_the_headers(http: httpx.AsyncClient) -> None:
    """The middleware passes a streamed body on as it comes (it is not BaseHTTPMiddleware)."""
    async with http.stream("GET", "/docs-assets/swagger-ui-bundle.js") as response:
        assert_hardened(response, "a streamed file")
        chunks = [chunk async for chunk in response.aiter_bytes()]
    assert len(chunks) > 1 and sum(map(len, chunks)) > 500_000


SVG = b'<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>'


@pytest.mark.parametrize(
    ("media_type", "name", "disposition"),
    [
        ("text/html", "report.html", "attachment"),
        ("TEXT/HTML", "report.html", "attachment"),
        ("image/svg+xml", "chart.svg", "attachment"),
        ("application/xhtml+xml", "page.xhtml", "attachment"),
        ("text/xml", "feed.xml", "attachment"),
        ("application/javascript", "app.js", "attachment"),
        ("text/javascript", None, "attachment"),
        ("application/pdf", "paper.pdf", "attachment"),
        ("application/x-unknown", "blob.bin", "attachment"),
        ("application/octet-stream", None, "attachment"),
        ("text/plain", "notes.txt", "inline"),
        ("text/plain", None, None),
        ("text/csv", "rows.csv", "inline"),
        ("application/json", "data.json", "inline"),
        ("image/png", "shot.png", "inline"),
        ("image/jpeg", "photo.jpg", "inline"),
        ("image/gif", "a.gif", "inline"),
        ("image/webp", "b.webp", "inline"),
    ],
)
async def test_an_artifact_of_an_active_type_is_an_attachment_in_a_sandbox(
    http: httpx.AsyncClient, media_type: str, name: str | None, disposition: str | None
) -> None:
    params: dict[str, Any] = {"name": name} if name else {}
    uploaded = await http.post("/artifacts", params=params, content=SVG, headers={"content-type": media_type})
    assert uploaded.status_code == 201, uploaded.text
    artifact_id = uploaded.json()["artifact_id"]

    served = await http.get(f"/artifacts/{artifact_id}")

    assert served.status_code == 200 and served.content == SVG
    assert_hardened(served, f"artifact {media_type}")
    assert served.headers["content-security-policy"].startswith("sandbox; default-src 'none'")
    got = served.headers.get("content-disposition")
    if disposition is None:
        assert got is None, got
    else:
        assert got is not None and got.startswith(f"{disposition}; filename="), got
        assert f'filename="{name or artifact_id}"' in got
