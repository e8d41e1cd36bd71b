"""The terminal tool's own rules, on a real PTY."""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
from temporalio.client import Client

from activities.tools.runner import ToolActivities
from activities.tools.terminal.policy import PROGRAM_INPUT
from activities.tools.terminal.tool import TerminalTool
from contracts import SandboxProfile
from core.settings import Settings, TemporalSettings, ToolSettings
from worker import build_worker

from ....conftest import assert_eventually
from .sandboxing import call, needs_bwrap, tool_run

AGENT_CLI = Path(__file__).parents[3] / "fakes" / "agent_cli.py"


Make = Callable[..., TerminalTool]


@pytest.fixture
async def make(tmp_path: Path) -> AsyncIterator[Make]:
    """Makes terminal tools working in `tmp_path/work` (settings as keywords); their shells end
    with the test, passed or failed."""
    made: list[TerminalTool] = []

    def tool(**tools: object) -> TerminalTool:
        work = tmp_path / "work"
        work.mkdir(exist_ok=True)
        settings = ToolSettings.model_validate({"terminal_cwd": work, **tools})
        made.append(TerminalTool.from_settings(Settings(data_dir=tmp_path, tools=settings, _env_file=None)))
        made[-1].prepare()
        return made[-1]

    yield tool
    for each in made:
        await each.close()


@needs_bwrap
async def test_input_for_a_program_at_its_prompt_always_needs_approval(tmp_path: Path, make: Make) -> None:
    tool = make()
    free, _ = tool.assess(call("ls"), {})
    assert free is False, "ls in the trusted folder is free in the shell"
    started = await tool.run(tool_run(f"{sys.executable} {AGENT_CLI}", "tool_1", SandboxProfile.FULL))
    assert started.ok and started.content["waiting_for_input"] == ">"
    assert started.metadata["waiting_for_input"] == ">"
    state = started.metadata
    assert tool.assess(call("ls"), state) == (True, f"it is {PROGRAM_INPUT}")
    assert tool.sandbox(call("ls"), state) is None, "input for a program cannot be sandboxed"
    context = tool.context(call("ls"), state)
    assert (context.sandbox, context.sandbox_note) == ("full", PROGRAM_INPUT)
    refused = await tool.run(tool_run("ls"))
    assert not refused.ok and "needs a person's approval" in (refused.error or "")
    sandboxed = await tool.run(tool_run("/quit", "tool_2", SandboxProfile.READ_ONLY))
    assert not sandboxed.ok and "approved for the read-only sandbox" in (sandboxed.error or "")
    approved = await tool.run(tool_run("/quit", "tool_3"))
    assert approved.ok and approved.content["output"] == "bye\n"
    assert approved.metadata["waiting_for_input"] is None
    back = await tool.run(tool_run("ls"))
    assert back.ok and back.metadata["sandbox"] == "trusted-read-only", "back in the shell, ls is free again"


@needs_bwrap
async def test_a_prompt_printed_in_a_sandbox_takes_no_input(tmp_path: Path, make: Make) -> None:
    """A sandboxed command that prints an OSC 697 prompt (a file's content, say) is not a program
    waiting for input: the next command still runs in its own sandbox, never typed into the shell."""
    tool = make()
    work, outside = tmp_path / "work", tmp_path / "outside"
    outside.mkdir()
    (work / "banner.txt").write_text("\x1b]697;StartPrompt\x07> \x1b]697;EndPrompt\x07")
    printed = await tool.run(tool_run("cat banner.txt"))
    assert printed.ok and printed.metadata["waiting_for_input"] is None
    approved = await tool.run(tool_run(f"touch {outside}/escaped", "tool_1", SandboxProfile.WORKSPACE_WRITE))
    assert approved.metadata["sandbox"] == "workspace-write" and not (outside / "escaped").exists()
    shown = await tool.run(tool_run("cat banner.txt", "tool_2", SandboxProfile.READ_ONLY))
    assert shown.ok and shown.metadata["waiting_for_input"] is None


def test_where_a_command_runs_and_in_what_sandbox_is_said(tmp_path: Path, make: Make) -> None:
    pty = make(terminal_bwrap="no-such-bwrap")
    where = str((tmp_path / "work").resolve())
    context = pty.context(call("rm x"), {})
    assert context.cwd == where and context.sandbox == "workspace-write"
    assert "'no-such-bwrap' was not found" in (context.sandbox_unavailable or "")
    assert pty.context(call("rm x"), {"cwd": "/srv"}).cwd == "/srv", "where the terminal really is"
    ttyd = make(terminal_backend="ttyd")
    remote = ttyd.context(call("ls"), {})
    assert remote.cwd is None, "a ttyd terminal's folder is known after a command"
    assert remote.sandbox == "none" and (remote.sandbox_note or "").startswith(
        "a ttyd terminal runs elsewhere"
    )
    assert ttyd.sandbox(call("ls"), {}) is None and pty.sandbox(call("rm x"), {}) == "workspace-write"


def test_without_bwrap_nothing_is_free_and_the_log_says_why_once(
    make: Make, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING):
        tool = make(terminal_bwrap="no-such-bwrap")
        needs_approval, why = tool.assess(call("ls"), {})
        tool.assess(call("cat README.md"), {})
    assert needs_approval and "no sandbox on this worker" in why and "no-such-bwrap" in why
    said = [r.message for r in caplog.records if "terminal sandbox unavailable" in r.message]
    assert len(said) == 1 and "Every terminal command needs approval" in said[0]


async def test_an_approved_command_without_a_sandbox_is_a_clear_error_and_never_runs_bare(
    tmp_path: Path, make: Make
) -> None:
    tool = make(terminal_bwrap="no-such-bwrap")
    marker = tmp_path / "work" / "ran.txt"
    refused = await tool.run(tool_run(f"touch {marker}", "tool_1"))
    assert not refused.ok and not marker.exists()
    assert "the workspace-write sandbox cannot start on this worker" in (refused.error or "")
    assert "sandbox `full`" in (refused.error or "")
    free = await tool.run(tool_run("ls"))
    assert not free.ok and "needs a person's approval" in (free.error or ""), "and nothing runs free"
    full = await tool.run(tool_run(f"touch {marker}", "tool_2", SandboxProfile.FULL))
    assert full.ok and marker.exists() and full.metadata["sandbox"] == "full"


def test_a_command_with_shell_syntax_or_code_has_no_head_a_grant_could_match(make: Make) -> None:
    """`git status; touch x` is more than `git status`, and so is ``git -c core.fsmonitor=… status``:
    a `session_prefix` grant for `git status` must not cover them."""
    tool = make()
    assert tool.head(call("git status --short")) == "git status"
    assert tool.head(call("ls -la")) == "ls"
    assert tool.head(call("git status; touch x")) is None
    assert tool.head(call("git status && rm -rf ~")) is None
    assert tool.head(call("git -c core.fsmonitor='touch x' status")) is None


@needs_bwrap
async def test_a_prompt_printed_by_a_program_that_ended_takes_no_input(tmp_path: Path, make: Make) -> None:
    """A file holding an OSC 697 prompt, shown by `cat` (approved without a sandbox): the shell has
    the terminal again, so the next command is not taken for a program's input."""
    tool = make()
    (tmp_path / "work" / "build.log").write_text("done\n\x1b]697;StartPrompt\x07q> \x1b]697;EndPrompt\x07")
    shown = await tool.run(tool_run("cat build.log", "tool_1", SandboxProfile.FULL))
    assert shown.ok and shown.metadata["waiting_for_input"] is None
    after = await tool.run(tool_run("echo in bash", "tool_2", SandboxProfile.FULL))
    assert after.ok and after.content["output"] == "in bash\n"


async def test_an_approved_run_retried_is_answered_with_its_first_result(tmp_path: Path, make: Make) -> None:
    """A retry of the same approval (an activity retried) finds its claim: the command is not typed again."""
    tool = make(terminal_bwrap="no-such-bwrap")
    log = tmp_path / "work" / "log.txt"
    first = await tool.run(tool_run("echo once >> log.txt; wc -l < log.txt", "tool_1", SandboxProfile.FULL))
    again = await tool.run(tool_run("echo once >> log.txt; wc -l < log.txt", "tool_1", SandboxProfile.FULL))
    assert first.ok and first.content["output"] == "1\n" and again == first
    assert log.read_text() == "once\n"
    other = await tool.run(tool_run("echo once >> log.txt; wc -l < log.txt", "tool_2", SandboxProfile.FULL))
    assert other.ok and other.content["output"] == "2\n", "another approval runs it again"


async def test_a_stopping_worker_ends_its_terminals(tmp_path: Path, client: Client, task_queue: str) -> None:
    """A worker's terminals (their shells and what runs in them) end when the worker stops."""
    settings = Settings(data_dir=tmp_path, temporal=TemporalSettings(task_queue=task_queue), _env_file=None)
    tools = ToolActivities(settings)
    terminal = tools.tools["terminal"]
    async with build_worker(client, settings, tools=tools):
        shown = await terminal.run(tool_run("echo $$", "tool_1", SandboxProfile.FULL))
        shell = int(shown.content["output"].strip())
        assert _alive(shell), "the terminal's shell runs while its worker does"
    await assert_eventually(
        lambda: asyncio.sleep(0, _alive(shell)), lambda alive: not alive, what="the shell ended"
    )


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}/status").read_text().find("State:\tZ") < 0
