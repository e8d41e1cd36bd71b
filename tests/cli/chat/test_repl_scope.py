"""The real `synapse chat` (in tmux) with a key scoped to projects: a key of one project starts its
sessions in that project, not in the folder's; a key of several says to choose one, which the
folder's settings may do."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from temporalio.client import Client

from core.settings import Settings

from ...api.test_project_scope import BEA, ROOT, SAM, scoped_api
from ...conftest import assert_eventually
from .test_repl import session_key, user_settings
from .tmux import TMUX, Tmux

pytestmark = pytest.mark.skipif(TMUX is None, reason="tmux is not installed (Debian: apt-get install tmux)")


@pytest.fixture
async def http(client: Client, settings: Settings, worker: None) -> AsyncIterator[httpx.AsyncClient]:
    """The API the REPLs talk to, with the keys of `test_project_scope` (sam: shop, bo: both)."""
    async with scoped_api(client, settings) as served:
        yield served


async def started_project(repl: Tmux, http: httpx.AsyncClient, seen_by: dict[str, str]) -> str:
    """Send a first message from the REPL; the project of the session it starts (the key `seen_by`
    reaches that session)."""
    await repl.type("hello")
    key = await session_key(repl)
    started = await assert_eventually(
        lambda: http.get(f"/sessions/{key}", headers=ROOT),
        lambda got: got.status_code == 200,
        what=f"session {key} started",
    )
    assert (await http.get(f"/sessions/{key}", headers=seen_by)).status_code == 200
    project: str = started.json()["project"]
    return project


async def test_a_key_of_one_project_starts_its_sessions_there(repl: Tmux, http: httpx.AsyncClient) -> None:
    user_settings(repl, 'principal = "sam"\n')  # who the key names: a session is for its caller
    await repl.start("--api-key", "k-shop")
    await repl.wait_for("your key acts in project shop: new sessions start there")
    await repl.wait_for("· project shop ·")
    assert await started_project(repl, http, SAM) == "shop"


async def test_a_key_of_several_projects_is_told_to_choose_one(repl: Tmux) -> None:
    user_settings(repl, 'principal = "bo"\n')
    await repl.start("--api-key", "k-both")
    await repl.wait_for("your key acts in projects billing, shop, not in ")
    await repl.wait_for("set `project` to one of them")
    await repl.type("hello")
    screen = await repl.wait_for("error: the session could not be started: project '")
    unwrapped = "".join(screen.splitlines())  # a long folder path wraps the line anywhere
    assert "is not one bo may act in (billing, shop)" in unwrapped, screen


async def test_the_folders_settings_choose_one_of_the_keys_projects(
    repl: Tmux, http: httpx.AsyncClient, project: Path
) -> None:
    (project / ".synapse" / "settings.toml").write_text('project = "billing"\n')
    user_settings(repl, 'principal = "bo"\n')
    await repl.start("--api-key", "k-both")
    await repl.wait_for("· project billing ·")
    assert await started_project(repl, http, BEA) == "billing"
