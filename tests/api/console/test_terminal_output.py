"""A command's output in the console arrives as it is printed, with its colours: the first line
is on the page while the command still waits for a file the test writes, then the rest."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from playwright.async_api import Page, expect

from contracts import SandboxProfile
from core.settings import Settings

from ...support import terminal_settings
from .test_session_page import open_session, send


@pytest.fixture
def settings(tmp_path: Path, task_queue: str) -> Settings:
    """Approved commands run without a sandbox here (`full`): the sandboxes have their own tests."""
    return terminal_settings(tmp_path, task_queue, terminal_sandbox=SandboxProfile.FULL)


async def test_a_commands_output_appears_line_by_line_in_colour(
    page: Page, http: httpx.AsyncClient, settings: Settings
) -> None:
    await open_session(page, http)
    await send(
        page, r"!printf '\033[31mfirst red\033[0m\n'; while [ ! -f go ]; do sleep 0.1; done; echo second"
    )
    card = page.locator("article.card")
    await expect(card).to_contain_text("terminal wants approval")
    await card.get_by_role("button", name="Approve once").click()

    output = page.get_by_label("Command output")
    await expect(output.locator("span.ansi-31")).to_have_text("first red")
    await expect(output).not_to_contain_text("second")
    assert settings.tools.terminal_cwd is not None
    (settings.tools.terminal_cwd / "go").touch()

    await expect(output).to_contain_text("second")
    await expect(page.locator(".conversation")).to_contain_text("exit status 0")
