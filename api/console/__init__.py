"""The web console at `/ui`: a static page of our own (HTML, ES modules, CSS) that is a client of
this API like any other: it reads the same routes and follows the same SSE streams, with the
caller's key sent as `Authorization: Bearer` (so over `fetch`, not `EventSource`).

A page of our own rather than Gradio: measured on this machine, Gradio added 285 MB of packages
and ~8 s to the API's start, streamed through a Python generator per open tab with no resume,
and failed four axe rules in its own markup; the page adds nothing to install and reads the
streams directly, resuming with `?after=`.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from fastapi.responses import RedirectResponse
from fastapi.staticfiles import StaticFiles

from ..headers import WithPolicy

STATIC_DIR = Path(__file__).parent / "static"
CONSOLE_PATH = "/ui"
POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
    "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
"""The console's Content-Security-Policy: its own scripts, styles and API only, no inline script or
style; an injected `<script>` or `onclick=` would not run (the page sets no markup from data, but
this holds if it ever did)."""


def install(app: FastAPI) -> None:
    """Serve the console at `/ui/` (and send `/ui` there); it is not part of the OpenAPI document."""
    if not (STATIC_DIR / "index.html").is_file():  # a broken install: say so at start-up
        raise RuntimeError(f"the console's page is missing from {STATIC_DIR}; reinstall Synapse")

    @app.get(CONSOLE_PATH, include_in_schema=False)
    async def console_root() -> RedirectResponse:
        return RedirectResponse(f"{CONSOLE_PATH}/")

    app.mount(CONSOLE_PATH, WithPolicy(StaticFiles(directory=STATIC_DIR, html=True), POLICY), name="console")
