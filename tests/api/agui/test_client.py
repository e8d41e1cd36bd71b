"""End to end with the real `@ag-ui/client` (npm, the version pinned in `client/package.json`): its
`HttpAgent` sends a DELETE, the run ends in an interrupt, and a fresh agent resumes it on another
API, approving, denying or editing it; the demo database and the audit trail say what happened, and
who did it. The approval is resumed on a real second API process (`synapse api` on its own port,
against the same Temporal server and task queue: nothing shared with the first but Temporal); the
denial and the edit, cheaper, on a second app in this process (its own stream hub).

The client is installed with `npm ci` from the committed lock into a folder outside the checkout
(`SYNAPSE_AGUI_CLIENT`, else a temp folder named by the lock's hash; `.ci/run` installs it first);
without node, or when the install fails (offline, no npm cache), the tests are skipped, saying why.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from temporalio.client import Client

from core.settings import Settings

from ...faults.processes import Children, start_api
from ...readme.blocks import fenced_blocks
from .test_runs import DELETE, KEYS, app_with_keys, audited

HERE = Path(__file__).parent
PACKAGE = HERE / "client"
DRIVER = HERE / "drive.cjs"
INSTALL_SECONDS = 240
RUN_SECONDS = 90


def client_folder() -> Path:
    """Where the client is installed: `SYNAPSE_AGUI_CLIENT`, else a temp folder named by the lock."""
    configured = os.environ.get("SYNAPSE_AGUI_CLIENT")
    if configured:
        return Path(configured)
    digest = hashlib.sha256((PACKAGE / "package-lock.json").read_bytes()).hexdigest()[:12]
    return Path(tempfile.gettempdir()) / f"synapse-agui-{digest}"


def installed_client() -> Path:
    """`node_modules` holding `@ag-ui/client`, installed from the lock when missing (skip when it
    cannot be: no node or npm, or npm failed)."""
    if shutil.which("node") is None:
        pytest.skip("node is not installed: the AG-UI client end-to-end test needs it")
    folder = client_folder()
    modules = folder / "node_modules"
    if (modules / "@ag-ui" / "client").is_dir():
        return modules
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip(f"npm is not installed and {modules} has no @ag-ui/client")
    # Installed beside the folder, then renamed into place: two test workers never share a half-install.
    staging = Path(tempfile.mkdtemp(prefix=f"{folder.name}.", dir=folder.parent))
    for name in ("package.json", "package-lock.json"):
        shutil.copy(PACKAGE / name, staging / name)
    try:
        done = subprocess.run(
            [npm, "ci", "--no-audit", "--no-fund", "--prefer-offline"],
            cwd=staging,
            capture_output=True,
            text=True,
            timeout=INSTALL_SECONDS,
            check=False,
        )
    except subprocess.TimeoutExpired:
        shutil.rmtree(staging, ignore_errors=True)
        pytest.skip(f"npm ci of @ag-ui/client took over {INSTALL_SECONDS}s (offline?)")
    if done.returncode != 0:
        shutil.rmtree(staging, ignore_errors=True)
        pytest.skip(f"npm ci of @ag-ui/client failed (offline, no npm cache?): {done.stderr.strip()[-300:]}")
    try:
        staging.rename(folder)
    except OSError:  # another worker finished first
        shutil.rmtree(staging, ignore_errors=True)
    return modules


async def drive(modules: Path, env: dict[str, str], *argv: str) -> list[dict[str, Any]]:
    """Run `drive.cjs`; its output lines, parsed."""
    process = await asyncio.create_subprocess_exec(
        "node",
        str(DRIVER),
        *argv,
        env={**os.environ, "NODE_PATH": str(modules), **env},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        async with asyncio.timeout(RUN_SECONDS):
            stdout, stderr = await process.communicate()
    except TimeoutError:
        process.kill()
        await process.wait()
        raise
    lines = [json.loads(line) for line in stdout.decode().splitlines() if line.strip()]
    assert process.returncode == 0, (stderr.decode(), lines)
    return lines


def endpoint(http: httpx.AsyncClient) -> str:
    return f"{str(http.base_url).rstrip('/')}/ag-ui"


def runs(lines: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """The output split by run (each ends with its `{"run": n, "ended": ...}` line)."""
    split: list[list[dict[str, Any]]] = [[]]
    for line in lines:
        if "run" in line:
            assert line["ended"] is True, f"run {line['run']} ended without RUN_FINISHED or RUN_ERROR"
            split.append([])
        else:
            split[-1].append(line)
    return split


def events(run: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [line for line in run if line.get("event") == kind]


ANSWERS = {
    "approved": ({"status": "resolved", "payload": {"approved": True}}, "approved"),
    "denied": ({"status": "cancelled", "metadata": {"reason": "not today"}}, "denied"),
    "edited": (
        {
            "status": "resolved",
            "payload": {"approved": True, "editedArgs": {"sql": "DELETE FROM orders WHERE id = 1"}},
        },
        "approved",
    ),
}


@asynccontextmanager
async def api_process(
    client: Client, settings: Settings, tmp_path: Path, request: pytest.FixtureRequest
) -> AsyncIterator[httpx.AsyncClient]:
    """`synapse api` as a process of its own, with the tests' keys; an HTTP client for it."""
    children = Children(tmp_path)
    request.addfinalizer(children.kill_all)  # pass or fail, nothing outlives the test
    _, url = await start_api(children, client, settings, SYNAPSE_API_KEYS=KEYS)
    async with httpx.AsyncClient(base_url=url, timeout=30) as http:
        yield http


@pytest.mark.parametrize("answer", list(ANSWERS))
async def test_the_real_client_is_interrupted_and_resumes_on_another_api(
    client: Client,
    settings: Settings,
    worker: None,
    count_orders: Callable[[str], int],
    answer: str,
    tmp_path: Path,
    request: pytest.FixtureRequest,
) -> None:
    modules = installed_client()

    def resuming_api(answer: str) -> AbstractAsyncContextManager[httpx.AsyncClient]:
        if answer == "approved":
            return api_process(client, settings, tmp_path, request)
        return app_with_keys(client, settings)

    response, kind = ANSWERS[answer]
    thread = f"t-{uuid.uuid4().hex[:8]}"
    cancelled = count_orders("status = 'cancelled'")
    async with app_with_keys(client, settings) as first, resuming_api(answer) as second:
        env = {
            "AGUI_URL": endpoint(first),
            "AGUI_RESUME_URL": endpoint(second),
            "AGUI_KEY": "k-op",
            "AGUI_RESUME_KEY": "k-ok",
            "AGUI_THREAD": thread,
        }
        one, two, rest = runs(await drive(modules, env, DELETE, json.dumps(response)))
        [start] = events(one, "TOOL_CALL_START")
        assert start["toolCallName"] == "sql"
        [finished] = [line for line in one if "finished" in line]
        assert finished["finished"] == "interrupt"
        [interrupt] = finished["interrupts"]
        assert interrupt["reason"] == "tool_approval" and interrupt["id"] == interrupt["toolCallId"]
        assert interrupt["id"] == start["toolCallId"] and "DELETE" in interrupt["message"]

        [result] = events(two, "TOOL_CALL_RESULT")
        assert result["toolCallId"] == interrupt["id"]
        assert events(two, "TEXT_MESSAGE_CONTENT"), "the agent's answer"
        assert [line["finished"] for line in two if "finished" in line] == ["success"]
        assert rest[-1]["messages"], "the client kept the run's messages"

        if answer == "approved":
            assert count_orders("status = 'cancelled'") == 0
        elif answer == "denied":
            assert count_orders("status = 'cancelled'") == cancelled
            assert json.loads(result["content"])["error"] == "denied by ann: not today"
        else:
            assert count_orders("id = 1") == 0 and count_orders("status = 'cancelled'") == cancelled
        assert await audited(second, f"thread:{thread}", "approved", "denied") == [(kind, "ann", "ag-ui")]


async def test_the_real_client_is_refused_a_viewers_key(
    client: Client, settings: Settings, worker: None
) -> None:
    modules = installed_client()
    async with app_with_keys(client, settings) as http:
        env = {
            "AGUI_URL": endpoint(http),
            "AGUI_KEY": "k-view",
            "AGUI_THREAD": f"t-{uuid.uuid4().hex[:8]}",
        }
        lines = await drive(modules, env, DELETE)
        [thrown] = [line for line in lines if "thrown" in line]
        assert thrown["status"] == 403 and "vera has role viewer" in thrown["thrown"]


def docs_example() -> str:
    """The frontend of docs/ag-ui.md, as a reader copies it."""
    page = (HERE.parents[2] / "docs" / "ag-ui.md").read_text()
    [block] = [b for b in fenced_blocks(page, "docs/ag-ui.md") if b.language == "js"]
    return block.code


async def test_the_docs_frontend_asks_in_the_terminal_and_its_approval_runs_the_call(
    client: Client, settings: Settings, worker: None, count_orders: Callable[[str], int], tmp_path: Path
) -> None:
    modules = installed_client()
    script = tmp_path / "agui-demo.cjs"
    script.write_text(docs_example())
    thread = f"t-{uuid.uuid4().hex[:8]}"
    assert count_orders("id = 2") == 1
    async with app_with_keys(client, settings) as http:
        process = await asyncio.create_subprocess_exec(
            "node",
            str(script),
            "DELETE FROM orders WHERE id = 2",
            env={
                **os.environ,
                "NODE_PATH": str(modules),
                "SYNAPSE_URL": str(http.base_url).rstrip("/"),
                "SYNAPSE_API_KEY": "k-ok",
                "THREAD": thread,
            },
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        async with asyncio.timeout(RUN_SECONDS):
            stdout, stderr = await process.communicate(b"y\n")
        said = stdout.decode()
        assert process.returncode == 0, (said, stderr.decode())
        assert "proposed: sql" in said and "approve? [y/N]" in said and "result: " in said
        assert count_orders("id = 2") == 0, said
        assert await audited(http, f"thread:{thread}", "approved") == [("approved", "ann", "ag-ui")]
