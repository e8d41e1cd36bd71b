"""The API's documentation pages, `/docs` (Swagger UI) and `/redoc`, served without a network.

FastAPI's own pages load Swagger UI and ReDoc from a CDN (and ReDoc's fonts from Google), so
they are blank on a machine that cannot reach the internet, which Synapse promises it need not.
The assets come from the installed `fastapi-offline` package instead (its `static/` folder:
`swagger-ui-bundle.js`, `swagger-ui.css`, `redoc.standalone.js`, `favicon.png`), mounted at
`/docs-assets`, and both pages point at them. The app is built with `docs_url=None,
redoc_url=None` so FastAPI adds no CDN pages of its own.
"""

from __future__ import annotations

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
    async def redoc(request: Request) -> HTMLResponse:
        return get_redoc_html(
            openapi_url=openapi_url(request),
            title=f"{app.title} - ReDoc",
            redoc_js_url=f"{assets(request)}/redoc.standalone.js",
            redoc_favicon_url=f"{assets(request)}/favicon.png",
            with_google_fonts=False,
        )
