"""A real browser on the real console: Debian's Chromium driven by Playwright, against the API
served on loopback with a real worker. Skipped, saying why, where Chromium is not installed."""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any, Literal

import httpx
import pytest
from playwright.async_api import Browser, ConsoleMessage, Page, Playwright, async_playwright, expect

CHROMIUM = next(
    (
        path
        for path in ("/usr/lib/chromium/chromium", shutil.which("chromium") or "")
        if path and Path(path).exists()
    ),
    None,
)
QUIET = [
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
"""Chromium's own calls home stay off: this machine reaches no outside host."""
SHOTS = Path(__file__).parents[3] / ".synapse" / "test-artifacts" / "console"
"""Screenshots the tests take, kept for a person to look at."""

expect.set_options(timeout=20_000)
"""How long an `expect` waits for the page: a 2-core machine running the whole suite is slow."""

pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="Chromium is not installed (Debian: apt-get install chromium)"
)


@pytest.fixture(scope="session")
async def playwright() -> AsyncIterator[Playwright]:
    """Playwright's driver, one per test process."""
    async with async_playwright() as driver:
        yield driver


@pytest.fixture(scope="session")
def launched() -> list[Browser]:
    """The test process's Chromium once launched (at most one): launching one per test cost a
    second or two of a loaded machine each time, and every test works in contexts of its own."""
    return []


@pytest.fixture
async def browser(playwright: Playwright, launched: list[Browser]) -> AsyncIterator[Browser]:
    """A headless Chromium, shared by the process's tests (launched again if it went away); every
    context a test opened is closed after it, so the next test starts with none."""
    assert CHROMIUM is not None
    if not launched or not launched[0].is_connected():
        launched[:] = [await playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=QUIET)]
    shared = launched[0]
    try:
        yield shared
    finally:
        for context in shared.contexts:
            await context.close()


@pytest.fixture
async def page(browser: Browser, http: httpx.AsyncClient) -> AsyncIterator[Page]:
    """A desktop-sized page (1280×800) whose base is the API under test."""
    context = await browser.new_context(viewport={"width": 1280, "height": 800}, base_url=str(http.base_url))
    opened = await context.new_page()
    opened.set_default_timeout(30_000)
    refused = refusals(opened)
    try:
        yield opened
    finally:
        await context.close()
    assert not refused, f"the page broke its Content-Security-Policy: {refused}"


def noted(page: Page, event: Literal["console", "request"], pick: Callable[[Any], str | None]) -> list[str]:
    """What `pick` makes of each `event` of `page` from now on, where it makes something (a list
    that fills as they come)."""
    found: list[str] = []

    def note(item: Any) -> None:
        if (picked := pick(item)) is not None:
            found.append(picked)

    page.on(event, note)
    return found


def refusals(page: Page) -> list[str]:
    """The Content-Security-Policy violations Chromium reports on `page` from now on: an inline
    script or style, or a load from another origin, the page tried."""

    def refused(message: ConsoleMessage) -> str | None:
        return message.text if "Content Security Policy" in message.text else None

    return noted(page, "console", refused)


async def shot(page: Page, name: str) -> Path:
    """Save a screenshot of the page as a test artifact; its path."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    path = SHOTS / f"{name}.png"
    await page.screenshot(path=str(path), full_page=True)
    return path
