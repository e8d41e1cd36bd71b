"""Fixtures of the REPL's tmux tests: a project folder, and tmux REPLs against the test's `http` API
(a module may serve its own `http`, e.g. with API keys)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from .tmux import Tmux


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """The folder the REPL runs in: a project (it has `.synapse/`)."""
    folder = tmp_path / "proj"
    (folder / ".synapse").mkdir(parents=True)
    return folder


@pytest.fixture
async def repl(http: httpx.AsyncClient, tmp_path: Path, project: Path) -> AsyncIterator[Tmux]:
    """A tmux server of the test's own, its REPLs against the test's API (none started yet)."""
    home = tmp_path / "home"
    home.mkdir()
    tmux = Tmux(home, project, str(http.base_url).rstrip("/"))
    try:
        yield tmux
    finally:
        await tmux.kill()
