"""A worker killed mid-command, and one killed while idle: each time the session is told its
terminal was lost, and the next command works in a fresh terminal on another worker. Neither the
killed command nor the one sent to the gone worker is ever run again.

Workers are real `synapse worker` processes; the person approves over the real HTTP API.
"""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

import httpx
import pytest
from temporalio.client import Client

from contracts import ToolRestarted
from core.settings import Settings
from core.wording import line_of

from ..conftest import assert_eventually
from ..support import collect_events, event_of
from .flows import RECOVERY_WITHIN, ask, tool_results, wait_answer, wait_pending
from .processes import Children, start_worker

TEST_BOUND = 240.0
"""Seconds the test may take in all: three worker starts, a heartbeat timeout and a queue wait."""
QUICK_LOSS = {
    "SYNAPSE_TERMINAL_HEARTBEAT_SECONDS": "2",
    "SYNAPSE_TERMINAL_WORKER_WAIT_SECONDS": "4",
    "SYNAPSE_TERMINAL_SANDBOX": "full",
}
"""A lost worker is noticed after a 2 s heartbeat gap; a command waits 4 s for its worker. Approved
commands run unsandboxed here: losing a worker does not depend on bwrap (its tests do)."""


async def approve(api: httpx.AsyncClient, key: str, interaction_id: str) -> httpx.Response:
    return await api.post(
        f"/sessions/{key}/interactions/{interaction_id}",
        json={"approved": True, "principal": "bob"},
        timeout=RECOVERY_WITHIN + 30,
    )


async def command(api: httpx.AsyncClient, key: str, line: str) -> str:
    """Send `!line`; the interaction id of its approval request."""
    await ask(api, key, f"!{line}")
    return await wait_pending(api, key)


@pytest.mark.slow
async def test_a_worker_killed_mid_command_loses_the_terminal_and_the_next_command_works(
    client: Client, settings: Settings, children: Children, api: httpx.AsyncClient, tmp_path: Path
) -> None:
    work = tmp_path / "work"
    (work / "sub").mkdir(parents=True)
    runs = work / "runs.txt"
    env = {"SYNAPSE_TERMINAL_CWD": str(work), **QUICK_LOSS}
    key = f"kill-term-{uuid.uuid4().hex[:8]}"
    async with asyncio.timeout(TEST_BOUND):
        first = await start_worker(children, client, settings, **env)
        answer = await approve(api, key, await command(api, key, "cd sub && pwd"))
        assert answer.status_code == 200 and answer.json()["tool_result"]["ok"], answer.text
        held_by = answer.json()["tool_result"]["metadata"]["worker_queue"]
        assert held_by.startswith(f"{settings.temporal.task_queue}@"), held_by
        await wait_answer(api, key)

        async def started() -> bool:
            return runs.exists()

        long_one = await command(api, key, f"echo run >> {runs} && sleep 120")
        approval = asyncio.create_task(approve(api, key, long_one))
        try:
            await assert_eventually(started, bool, within=30, what="the long command running")
            await first.kill()
            second = await start_worker(children, client, settings, **env)
            session = await wait_answer(api, key)
            response = await approval
            assert response.status_code in (200, 202), response.text
        finally:
            approval.cancel()
        lost = tool_results(session)[-1]
        assert lost["ok"] is False and lost["error"].startswith("terminal lost:"), lost
        assert held_by in lost["error"] and "may have been cut short and is not run again" in lost["error"]
        assert "the next call starts a fresh terminal" in lost["error"]

        answer = await approve(api, key, await command(api, key, 'echo "$PWD"'))
        assert answer.status_code == 200, answer.text
        result = answer.json()["tool_result"]
        assert result["ok"] and result["content"]["output"].strip() == str(work), (
            "a fresh terminal starts in the cwd"
        )
        assert result["metadata"]["fresh_terminal"] is True
        assert result["metadata"]["worker_queue"] != held_by
        await wait_answer(api, key)

        await second.kill()  # gone while idle: the next command waits for it in vain, and never runs
        await start_worker(children, client, settings, **env)
        answer = await approve(api, key, await command(api, key, f"echo idle >> {runs}"))
        assert answer.status_code == 200, answer.text
        error = answer.json()["tool_result"]["error"]
        assert error.startswith("terminal lost:") and "the call did not run" in error, error
        answer = await approve(api, key, await command(api, key, 'echo "$PWD"'))
        assert answer.status_code == 200 and answer.json()["tool_result"]["ok"], answer.text
        await wait_answer(api, key)
    assert runs.read_text() == "run\n", (
        "neither the killed command nor the one its worker never took ran again"
    )
    notes = await collect_events(api, key, lambda chunk: isinstance(chunk.content, ToolRestarted))
    assert event_of(notes[-1], ToolRestarted).tool_name == "terminal"
    assert "the last one was lost with its worker" in line_of(notes[-1].content).text
