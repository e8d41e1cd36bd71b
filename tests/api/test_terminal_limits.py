"""A terminal command that goes quiet (`SYNAPSE_TERMINAL_IDLE_SECONDS`) or runs too long
(`SYNAPSE_TERMINAL_TIMEOUT_SECONDS`) gets Ctrl-C, and the session says so over HTTP: the approver's
answer, the stream's `error` chunk, and the agent's answer; the terminal takes the next command."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from contracts import (
    CommandEnded,
    CommandFailed,
    CommandOutput,
    SandboxProfile,
    TaskChunkType,
    ToolUsed,
    TurnAnswered,
)
from core.settings import Settings

from ..activities.tools.terminal.sandboxing import needs_bwrap
from ..support import collect_events, event_of, events, terminal_settings
from .test_sessions import decide, new_key
from .test_terminal import ask, turn_over

IDLE_SECONDS = 2
TIMEOUT_SECONDS = 5
SANDBOXES = [
    pytest.param(SandboxProfile.WORKSPACE_WRITE, marks=needs_bwrap, id="workspace-write"),
    pytest.param(SandboxProfile.FULL, id="full"),
]


@pytest.fixture
def settings(tmp_path: Path, task_queue: str) -> Settings:
    """The test's settings: a terminal in its own folder, with short time limits."""
    return terminal_settings(
        tmp_path, task_queue, terminal_idle_seconds=IDLE_SECONDS, terminal_timeout_seconds=TIMEOUT_SECONDS
    )


async def interrupted(
    http: httpx.AsyncClient, sandbox: SandboxProfile, command: str, error: str, error_type: str
) -> str:
    """Run `command` approved in a new session under `sandbox`; check every place that says it was
    interrupted with `error` (`error_type`); the session's key."""
    key = new_key()
    created = await http.post("/sessions", json={"session_key": key, "sandbox": sandbox.value})
    assert created.status_code == 201, created.text
    interaction_id, offset = await ask(http, key, command)
    answered = await decide(http, key, interaction_id, approved=True, principal="bob")
    assert answered.status_code == 200, answered.text
    result = answered.json()["tool_result"]
    assert (result["ok"], result["error"]) == (False, error)
    assert result["content"]["output"].startswith("started\n") and "never" not in result["content"]["output"]
    assert result["metadata"]["command_success"] is False and result["metadata"]["sandbox"] == sandbox.value

    chunks = await collect_events(http, key, turn_over, params={"after": offset}, within=60)
    ends = [c.content for c in chunks if isinstance(c.content, CommandEnded | CommandFailed)]
    assert [(type(e), e.source_tool) for e in ends] == [(CommandFailed, "terminal")], (
        "the command's end is one error chunk, no `complete`"
    )
    failed = ends[0]
    assert isinstance(failed, CommandFailed) and (failed.error_type, failed.error_message) == (
        error_type,
        error,
    )
    [answer] = events(chunks, TurnAnswered)
    assert answer.answer == f"terminal failed: {error}", "the agent is told, and tells the user"
    session = (await http.get(f"/sessions/{key}")).json()
    assert session["status"] == "active" and session["messages"][-1]["content"] == f"terminal failed: {error}"

    again, _ = await ask(http, key, "echo still usable && true")
    after = (await decide(http, key, again, approved=True, principal="bob")).json()["tool_result"]
    assert after["ok"] and after["content"]["output"] == "still usable\n", (
        "the terminal takes the next command"
    )
    return key


@pytest.mark.parametrize("sandbox", SANDBOXES)
async def test_a_command_silent_for_the_idle_time_is_interrupted_and_the_session_says_so(
    http: httpx.AsyncClient, sandbox: SandboxProfile
) -> None:
    error = f"no output for {IDLE_SECONDS} s (waiting for input?): interrupted with Ctrl-C"
    await interrupted(http, sandbox, "echo started && sleep 60 && echo never", error, "inactivity")


TICKING = "echo started && perl -e '$|=1; for (1..300) { print \"tick $_\\n\"; select(undef, undef, undef, 0.2) }' && echo never"
"""Prints a line every 0.2 s for a minute: never silent, always too long."""


@pytest.mark.parametrize("sandbox", SANDBOXES)
async def test_a_command_running_past_the_timeout_is_interrupted_and_the_session_says_so(
    http: httpx.AsyncClient, sandbox: SandboxProfile
) -> None:
    error = f"still running after {TIMEOUT_SECONDS} s: interrupted with Ctrl-C"
    key = await interrupted(http, sandbox, TICKING, error, "timeout")
    chunks = await collect_events(http, key, turn_over, within=60)  # its first turn, from the start
    stopped = next(c for c in chunks if c.chunk_type == TaskChunkType.ERROR)
    streamed = "".join(
        c.content.text
        for c in chunks
        if isinstance(c.content, CommandOutput) and c.sequence_id < stopped.sequence_id
    )
    assert streamed.startswith("started\ntick 1\ntick 2\n"), "its output streamed until it was stopped"
    used = next(c for c in chunks if c.chunk_type == TaskChunkType.TOOL_USE)
    assert used.sequence_id > stopped.sequence_id and event_of(used, ToolUsed).result.error == error


SHELL_LOOP = "while true; do /bin/true; done"
"""Silent, and forking all the time: the shell itself, not one program, must stop."""


@pytest.mark.slow
async def test_a_shell_loop_is_interrupted_every_time_and_the_terminal_survives(
    http: httpx.AsyncClient,
) -> None:
    """A loop of short commands in the session's own shell gets the same Ctrl-C as one program: each
    run is stopped for its inactivity. "terminal lost" instead means the stop failed, and the next
    command starts in a fresh terminal without the session's folder and variables."""
    key = new_key()
    created = await http.post("/sessions", json={"session_key": key, "sandbox": SandboxProfile.FULL.value})
    assert created.status_code == 201, created.text
    error = f"no output for {IDLE_SECONDS} s (waiting for input?): interrupted with Ctrl-C"
    errors = []
    for _ in range(8):
        interaction_id, _ = await ask(http, key, SHELL_LOOP)
        answered = await decide(http, key, interaction_id, approved=True, principal="bob")
        assert answered.status_code == 200, answered.text
        errors.append(answered.json()["tool_result"]["error"])
    assert errors == [error] * 8, errors
