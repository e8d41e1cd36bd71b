"""Real bash on real PTYs: completion by sentinel, exit status, Ctrl-C on cancel, inactivity and
timeout, colours stripped, output bounded, state kept between commands."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from activities.tools.terminal.ansi import strip_ansi
from activities.tools.terminal.pty_shell import PtyShell
from activities.tools.terminal.shell import Shell


@pytest.fixture
async def shell(tmp_path: Path) -> AsyncIterator[Shell]:
    terminal = Shell(PtyShell(tmp_path), max_bytes=200_000)
    await terminal.start()
    yield terminal
    await terminal.close()


async def test_output_arrives_while_the_command_runs_and_the_status_at_its_end(shell: Shell) -> None:
    seen: list[tuple[float, str]] = []
    outcome = await shell.run(
        "echo hello && sleep 1 && echo done",
        total_seconds=10,
        idle_seconds=5,
        on_output=lambda text: seen.append((time.monotonic(), text)),
    )
    assert (outcome.output, outcome.exit_status, outcome.success) == ("hello\ndone\n", 0, True)
    assert [text for _, text in seen] == ["hello\n", "done\n"]
    assert seen[1][0] - seen[0][0] >= 0.9 and outcome.execution_time >= 1.0


async def test_a_failure_keeps_its_exit_status_and_state_is_kept(shell: Shell, tmp_path: Path) -> None:
    failed = await shell.run("ls /nonexistent", total_seconds=10, idle_seconds=5)
    assert failed.exit_status == 2 and not failed.success and "No such file" in failed.output
    await shell.run("mkdir -p a/b && cd a/b && export X=42", total_seconds=10, idle_seconds=5)
    kept = await shell.run("echo $X", total_seconds=10, idle_seconds=5)
    assert kept.output == "42\n" and kept.cwd == str(tmp_path / "a" / "b")


async def test_colours_are_stripped_from_the_text_and_kept_in_the_raw_bytes(shell: Shell) -> None:
    outcome = await shell.run("printf '\\033[31mred\\033[0m plain\\n'", total_seconds=10, idle_seconds=5)
    assert outcome.output == "red plain\n"
    assert b"\x1b[31m" in outcome.raw


async def test_a_program_waiting_for_input_is_interrupted_and_the_shell_goes_on(shell: Shell) -> None:
    waiting = await shell.run("read answer; echo got $answer", total_seconds=10, idle_seconds=1)
    assert waiting.interrupted == "inactivity" and waiting.exit_status == 130 and "got" not in waiting.output
    after = await shell.run("echo still here", total_seconds=10, idle_seconds=5)
    assert after.output == "still here\n" and after.success


async def test_a_long_command_is_cancelled_with_ctrl_c(shell: Shell) -> None:
    started = time.monotonic()
    outcome = await shell.run(
        "sleep 30", total_seconds=60, idle_seconds=60, cancelled=lambda: time.monotonic() - started > 0.5
    )
    assert outcome.interrupted == "cancelled" and outcome.exit_status == 130
    assert time.monotonic() - started < 10
    timed = await shell.run("sleep 30", total_seconds=1, idle_seconds=60)
    assert timed.interrupted == "timeout"


async def test_large_output_is_bounded_and_the_rest_counted(shell: Shell) -> None:
    outcome = await shell.run(
        "head -c 500000 /dev/zero | tr '\\0' x; echo", total_seconds=20, idle_seconds=10
    )
    assert outcome.success and len(outcome.raw) == 200_000
    assert outcome.truncated_bytes > 290_000


def test_escape_sequences_and_overwritten_lines() -> None:
    assert strip_ansi("\x1b]0;title\x07\x1b[1;32mok\x1b[0m\r\n") == "ok\n"
    assert strip_ansi("10%\r50%\r100%\n") == "100%\n"
    assert strip_ansi("\x1b]697;StartPrompt\x07$ ") == "$ "
