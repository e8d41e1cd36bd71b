"""The API's documentation pages, `/docs` (Swagger UI) and `/redoc`, served without a network.

FastAPI's own pages load Swagger UI and ReDoc from a CDN (and ReDoc's fonts from Google), so
they are blank on a machine that cannot reach the internet, which Synapse promises it need not.
The assets come from the installed `fastapi-offline` package instead (its `static/` folder:
`swagger-ui-bundle.js`, `swagger-ui.css`, `redoc.standalone.js`, `favicon.png`), mounted at
`/docs-assets`, and both pages point at them. The app is built with `docs_url=None,
redoc_url=None` so FastAPI adds no CDN pages of its own.

Each page carries a Content-Security-Policy of its own (`policy_for`): scripts from this origin
and, by hash, the one inline script Swagger UI's page starts itself with; inline styles, which
ReDoc writes at run time; nothing from any other origin.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import re
from collections.abc import Awaitable, Callable
from pathlib import Path

import fastapi_offline
from fastapi import FastAPI, Request
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

ASSETS_DIR = Path(fastapi_offline.__file__).parent / "static"
"""Swagger UI's and ReDoc's dist files, as the fastapi-offline package ships them."""
ASSETS_PATH = "/docs-assets"
DOCS_PATH = "/docs"
REDOC_PATH = "/redoc"
_INLINE_SCRIPT = re.compile(rb"<script>(.*?)</script>", re.DOTALL)


def policy_for(page: bytes) -> str:
    """The Content-Security-Policy of a docs page: its inline scripts allowed by their SHA-256."""
    hashes = " ".join(
        f"'sha256-{base64.b64encode(hashlib.sha256(script).digest()).decode()}'"
        for script in _INLINE_SCRIPT.findall(page)
    )
    return (
        f"default-src 'none'; script-src 'self' {hashes}".rstrip() + "; style-src 'self' 'unsafe-inline'; "
        "img-src 'self' data:; font-src 'self' data:; connect-src 'self'; worker-src 'self' blob:; "
        "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    )


def _with_policy(
    page: Callable[[Request], Awaitable[HTMLResponse]],
) -> Callable[[Request], Awaitable[HTMLResponse]]:
    """The route `page`, its answer carrying its `policy_for`."""

    @functools.wraps(page)
    async def with_policy(request: Request) -> HTMLResponse:
        shown = await page(request)
        shown.headers["Content-Security-Policy"] = policy_for(bytes(shown.body))
        return shown

    return with_policy


def install(app: FastAPI) -> None:
    """Mount the assets and add `GET /docs` and `GET /redoc` (neither is in the OpenAPI document)."""
    if not (ASSETS_DIR / "swagger-ui-bundle.js").is_file():  # a broken install: say so at start-up
        raise RuntimeError(f"the API docs assets are missing from {ASSETS_DIR}; reinstall fastapi-offline")
    app.mount(ASSETS_PATH, StaticFiles(directory=ASSETS_DIR), name="docs-assets")

    def assets(request: Request) -> str:
        return f"{request.scope.get('root_path', '')}{ASSETS_PATH}"

    def openapi_url(request: Request) -> str:
        return f"{request.scope.get('root_path', '')}{app.openapi_url}"

    @app.get(DOCS_PATH, include_in_schema=False)
    @_with_policy
    async def swagger_ui(request: Request) -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url=openapi_url(request),
            title=f"{app.title} - API docs",
            swagger_js_url=f"{assets(request)}/swagger-ui-bundle.js",
            swagger_css_url=f"{assets(request)}/swagger-ui.css",
            swagger_favicon_url=f"{assets(request)}/favicon.png",
            swagger_ui_parameters=app.swagger_ui_parameters,
        )

    @app.get(REDOC_PATH, include_in_schema=False)
    @_with_policy
    async def redoc(request: Request) -> HTMLResponse:
        return get_redoc_html(
            openapi_url=openapi_url(request),
            title=f"{app.title} - ReDoc",
            redoc_js_url=f"{assets(request)}/redoc.standalone.js",
            redoc_favicon_url=f"{assets(request)}/favicon.png",
            with_google_fonts=False,
        )
