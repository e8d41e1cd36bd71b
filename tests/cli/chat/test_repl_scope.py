"""The real `synapse chat` (in tmux) with a key scoped to projects: a key of one project starts its
sessions in that project, not in the folder's; a key of several says to choose one."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from temporalio.client import Client

from api.main import create_app
from core.settings import ApiSettings, Settings

from ...api.test_project_scope import BEA, KEYS, ROOT, SAM
from ...conftest import assert_eventually
from ...support import serve
from .test_repl import session_key, user_settings
from .tmux import TMUX, Tmux

pytestmark = pytest.mark.skipif(TMUX is None, reason="tmux is not installed (Debian: apt-get install tmux)")


@pytest.fixture
async def keyed(client: Client, settings: Settings, worker: None) -> AsyncIterator[httpx.AsyncClient]:
    """The API with the keys of `test_project_scope` (sam: shop, bea: billing, bo: both, ada: all)."""
    keyed_settings = settings.model_copy(update={"api": ApiSettings(keys=KEYS)})
    async with serve(create_app(keyed_settings, client=client)) as http:
        yield http


@pytest.fixture
async def repl(keyed: httpx.AsyncClient, tmp_path: Path) -> AsyncIterator[Tmux]:
    """A tmux server of the test's own, its REPLs in a project folder against the keyed API."""
    folder, home = tmp_path / "proj", tmp_path / "home"
    (folder / ".synapse").mkdir(parents=True)
    home.mkdir()
    tmux = Tmux(home, folder, str(keyed.base_url).rstrip("/"))
    try:
        yield tmux
    finally:
        await tmux.kill()


async def test_a_key_of_one_project_starts_its_sessions_there(repl: Tmux, keyed: httpx.AsyncClient) -> None:
    http = keyed
    user_settings(repl, 'principal = "sam"\n')  # who the key names: a session is for its caller
    await repl.start("--api-key", "k-shop")
    await repl.wait_for("your key acts in project shop: new sessions start there")
    await repl.wait_for("· project shop ·")
    await repl.type("hello")
    key = await session_key(repl)
    started = await assert_eventually(
        lambda: http.get(f"/sessions/{key}", headers=ROOT),
        lambda got: got.status_code == 200,
        what=f"session {key} started",
    )
    assert started.json()["project"] == "shop"
    assert (await http.get(f"/sessions/{key}", headers=SAM)).status_code == 200
    assert (await http.get(f"/sessions/{key}", headers=BEA)).status_code == 404


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
    repl: Tmux, keyed: httpx.AsyncClient
) -> None:
    http = keyed
    (repl.cwd / ".synapse" / "settings.toml").write_text('project = "billing"\n')
    user_settings(repl, 'principal = "bo"\n')
    await repl.start("--api-key", "k-both")
    await repl.wait_for("· project billing ·")
    await repl.type("hello")
    key = await session_key(repl)
    started = await assert_eventually(
        lambda: http.get(f"/sessions/{key}", headers=ROOT),
        lambda got: got.status_code == 200,
        what=f"session {key} started",
    )
    assert started.json()["project"] == "billing"
    assert (await http.get(f"/sessions/{key}", headers=SAM)).status_code == 404
