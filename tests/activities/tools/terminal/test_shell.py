"""Real bash on real PTYs: completion by sentinel, exit status, Ctrl-C on cancel, inactivity and
timeout, colours stripped, output bounded, state kept between commands."""

from __future__ import annotations

import signal
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from activities.tools.terminal.ansi import strip_ansi
from activities.tools.terminal.chunks import TerminalChunk, process
from activities.tools.terminal.pty_shell import PtyShell
from activities.tools.terminal.shell import Shell, _Stream


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
        on_output=lambda chunk: seen.append((time.monotonic(), chunk.content)),
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


async def test_8_bit_control_sequences_reach_neither_the_output_nor_the_stream(shell: Shell) -> None:
    """A file a command prints may hold C1 controls (here CSI U+009B, OSC U+009D, ST U+009C and NEL
    U+0085, UTF-8 encoded): a terminal showing the answer or the stream would act on them."""
    streamed: list[TerminalChunk] = []
    outcome = await shell.run(
        r"printf '\302\2332J\302\23331mred\302\2330m \302\2350;title\302\234plain\302\205\n'",
        total_seconds=10,
        idle_seconds=5,
        on_output=streamed.append,
    )
    assert outcome.output == "red plain\n"
    assert "".join(chunk.content for chunk in streamed) == "red plain\n"
    assert not any("styled" in chunk.metadata for chunk in streamed), "only 7-bit colours are kept"
    assert b"\xc2\x9b31m" in outcome.raw


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


async def test_ctrl_c_stops_a_command_when_the_worker_ignores_it(tmp_path: Path) -> None:
    """A worker started in the background of a script (`synapse worker &`, a CI runner) ignores
    SIGINT and SIGQUIT; its terminals must not inherit that, or Ctrl-C stops nothing."""
    before = {sig: signal.signal(sig, signal.SIG_IGN) for sig in (signal.SIGINT, signal.SIGQUIT)}
    try:
        terminal = Shell(PtyShell(tmp_path))
        await terminal.start()
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)
    try:
        started = time.monotonic()
        outcome = await terminal.run(
            "sleep 30", total_seconds=60, idle_seconds=60, cancelled=lambda: time.monotonic() - started > 0.5
        )
        assert outcome.interrupted == "cancelled" and time.monotonic() - started < 10
        after = await terminal.run("echo still here", total_seconds=10, idle_seconds=5)
        assert after.output == "still here\n"
    finally:
        await terminal.close()


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


AGENT_CLI = Path(__file__).parents[3] / "fakes" / "agent_cli.py"


async def test_an_agent_cli_is_done_at_its_marked_prompt_and_its_output_is_typed(shell: Shell) -> None:
    started = await shell.run(f"{sys.executable} {AGENT_CLI}", total_seconds=20, idle_seconds=10)
    assert (started.prompt, started.terminal_type, started.exit_status) == (">", "qcli", None)
    assert started.success and shell.foreground is not None

    seen: list[TerminalChunk] = []
    answered = await shell.run("list my files", total_seconds=20, idle_seconds=10, on_output=seen.append)
    spinner = [chunk for chunk in seen if chunk.type == "thinking"]
    assert len(spinner) >= 1 and seen[: len(spinner)] == spinner, "each spinner frame, as it is drawn"
    assert all(c.content.endswith(" Thinking...") and c.metadata["terminal_type"] == "qcli" for c in spinner)
    after = seen[len(spinner) :]
    kinds = [kind for n, kind in enumerate(c.type for c in after) if n == 0 or after[n - 1].type != kind]
    assert kinds == ["tool_use", "content", "pending"], "the answer may come in one read or several"
    tool_use, pending = after[0], after[-1]
    contents = [chunk for chunk in after if chunk.type == "content"]
    assert tool_use.metadata["tool_name"] == "fs_read" and tool_use.metadata["raw_length"] > 0
    text = "".join(chunk.content for chunk in contents)
    assert text == "You asked: list my files\nThat is all I know.\n", "echo and escapes removed"
    assert all(chunk.metadata["content_length"] == len(chunk.content) for chunk in contents)
    assert pending.metadata == {"terminal_type": "qcli", "prompt_text": ">"}
    assert answered.output.endswith("You asked: list my files\nThat is all I know.\n")
    assert "list my files\n" not in answered.output.split("You asked")[0], "the echo is not output"

    quit_ = await shell.run("/quit", total_seconds=20, idle_seconds=10)
    assert (quit_.output, quit_.exit_status, quit_.prompt) == ("bye\n", 0, None)
    assert shell.foreground is None
    back = await shell.run("echo back in bash", total_seconds=10, idle_seconds=5)
    assert back.output == "back in bash\n" and back.terminal_type == "generic"


def test_generic_output_is_content_with_seed_004_metadata() -> None:
    [chunk] = process("\x1b[31mred\x1b[0m\n", "generic")
    assert (chunk.type, chunk.content) == ("content", "red\n")
    assert chunk.metadata == {
        "raw_length": 13,
        "content_length": 4,
        "terminal_type": "generic",
        "styled": "\x1b[31mred\x1b[0m\n",
    }
    assert process("\x1b[0m", "generic") == []


def test_the_sentinels_newline_is_never_streamed_as_output() -> None:
    """ttyd often sends a command's last line and the sentinel's leading newline in one frame."""
    seen: list[str] = []
    stream = _Stream("\n__SYNabc:", 10_000, lambda chunk: seen.append(chunk.content))
    for frame in (b"hello\r\n", b"done\r\n\r\n", b"__SYNabc:0:/tmp\r\n"):
        stream.feed(frame)
    assert seen == ["hello\n", "done\n"] and stream.text() == "hello\ndone\n"
    assert stream.sentinel_fields() == (0, "/tmp")


def test_the_echo_of_input_typed_into_a_program_is_never_streamed() -> None:
    """An agent CLI's line editor echoes the input, split across reads as it likes."""
    seen: list[str] = []
    stream = _Stream(
        "\n__SYNabc:",
        10_000,
        lambda chunk: seen.append(chunk.content),
        echo="hi there",
        terminal_type="qcli",
        program_waits=lambda: True,
    )
    for frame in (b"hi th", b"ere\r", b"\nHello!\r\n", b"\x1b]697;StartPrompt\x07> \x1b]697;EndPrompt\x07"):
        stream.feed(frame)
    assert (stream.candidate, stream.prompt, seen) == (">", None, ["Hello!\n"]), "not yet known to wait"
    stream.settle(float("inf"))
    assert seen == ["Hello!\n", ">"] and stream.prompt == ">" and stream.text() == "Hello!\n"
