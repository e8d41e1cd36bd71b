"""Terminal sandbox cost: a free command on a real PTY shell, typed bare vs in its bubblewrap sandbox.

A trusted folder with three small files; per command (`ls`, `cat README.md`, `grep -n x notes.txt`),
alternating in every round: the command typed as-is into a PTY shell (`Shell(PtyShell(folder))`,
bare), the line the tool types for it as a free command (`Sandbox.free_line`) into the same shell,
and the whole tool path (`TerminalTool.run` without a claim, outside Temporal: free rules, the
sandboxed line in the tool's own shell, its status check and the result). Timed: until the shell's
sentinel is back. No Temporal is involved. Where bwrap cannot start a sandbox, the benchmark says
why in one row and measures nothing.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable
from pathlib import Path

from activities.tools.terminal.command import words_of
from activities.tools.terminal.policy import FREE_SANDBOX
from activities.tools.terminal.pty_shell import PtyShell
from activities.tools.terminal.sandbox import Sandbox
from activities.tools.terminal.scratch import Scratch
from activities.tools.terminal.shell import CommandOutcome, Shell
from activities.tools.terminal.tool import TerminalTool
from contracts import ToolCallRequest, ToolRun
from core.settings import Settings, ToolSettings

from .harness import Harness
from .stats import Measure, Result, Row, Step, alternate, progress

COMMANDS = ("ls", "cat README.md", "grep -n x notes.txt")
"""Free commands: allowlisted programs reading the trusted folder."""
FILES = {
    "README.md": "# bench\n\nA trusted folder for the terminal benchmark.\n",
    "notes.txt": "one\nx marks the spot\nthree\n",
    "data.csv": "id,value\n1,x\n2,y\n",
}
COMMAND_SECONDS = 30.0
"""Time and silence a command may take before Ctrl-C (a sample that needs it fails the run)."""


def _prepare(root: Path, bwrap: str) -> tuple[Path, Scratch, Sandbox | None, str]:
    """The trusted folder (with `FILES`), a terminal's scratch folder beside it in the tool's data
    dir, and the sandbox the tool would make of them (None and why not, when bwrap cannot start)."""
    work, data = root / "work", root / "data"
    work.mkdir(parents=True)
    (data / "scratch").mkdir(parents=True)
    for name, text in FILES.items():
        (work / name).write_text(text)
    sandbox, why = Sandbox.find(bwrap, [work], work, [data], [Path(".env")])  # as the tool makes it
    scratch = Scratch(data.resolve() / "scratch")
    return work.resolve(), scratch, sandbox, why


def _tool(work: Path, data: Path, bwrap: str) -> TerminalTool:
    """The terminal tool as a worker configured for `work` would have it, ready."""
    tools = ToolSettings.model_validate(
        {"terminal_cwd": work, "terminal_trusted": str(work), "terminal_bwrap": bwrap}
    )
    tool = TerminalTool.from_settings(Settings(data_dir=data, tools=tools, _env_file=None))
    tool.prepare()
    return tool


def _checked(command: str, how: str, outcome: CommandOutcome) -> CommandOutcome:
    if outcome.exit_status != 0 or outcome.interrupted is not None:
        raise RuntimeError(
            f"terminal bench: {command!r} ({how}) ended with exit status {outcome.exit_status} "
            f"(interrupted: {outcome.interrupted}); expected 0. Output: {outcome.output[:500]!r}"
        )
    return outcome


async def run(harness: Harness, *, samples: int, warmup: int, bwrap: str = "bwrap") -> Result:
    """Measure and return a row per command (sandboxed vs bare) and one for the tool path under it."""
    work, scratch, sandbox, why = await asyncio.to_thread(
        _prepare, harness.data_dir / "terminal-bench", bwrap
    )
    if sandbox is None:
        progress(f"terminal: skipped: {why}")
        return Result(
            rows=[Row("terminal: free command in its sandbox", "ms", None, None, f"skipped: {why}")],
            notes=[f"terminal: skipped, no sandbox could start here ({why})"],
        )
    tool = await asyncio.to_thread(_tool, work, scratch.folder.parent, bwrap)
    shell = Shell(PtyShell(work))

    def boxed(command: str) -> str:
        """The free command's sandboxed line (its words written to the scratch folder, as the tool does)."""
        return sandbox.free_line(words_of(command) or [], scratch)

    async def typed(command: str, sandboxed: bool) -> tuple[float, CommandOutcome]:
        """Type `command` (its sandboxed line, or as is); the seconds until its sentinel, and its
        (checked) outcome."""
        how = "sandboxed" if sandboxed else "bare"
        started = time.perf_counter()
        line = boxed(command) if sandboxed else command
        outcome = await shell.run(line, total_seconds=COMMAND_SECONDS, idle_seconds=COMMAND_SECONDS)
        elapsed = time.perf_counter() - started
        _checked(command, how, outcome)
        if sandboxed and not scratch.started():
            raise RuntimeError(
                f"terminal bench: the sandbox did not run {command!r}: {outcome.output[:500]!r}"
            )
        return elapsed, outcome

    async def through_tool(command: str) -> float:
        call = ToolCallRequest(tool_id="terminal", arguments={"command": command})
        started = time.perf_counter()
        result = await tool.run(ToolRun(owner_id="bench", call=call))
        elapsed = time.perf_counter() - started
        if not result.ok or result.metadata.get("sandbox") != FREE_SANDBOX:
            raise RuntimeError(f"terminal bench: the tool did not run {command!r} free: {result.error}")
        return elapsed

    def steps(command: str) -> dict[str, Step]:
        return {
            f"bare {command}": lambda _i: _seconds(typed(command, False)),
            f"sandboxed {command}": lambda _i: _seconds(typed(command, True)),
            f"tool {command}": lambda _i: through_tool(command),
        }

    try:
        await shell.start()
        for command in COMMANDS:  # the sandbox shows the same files: the same output (as a pipe's)
            bare = _checked(
                command, "bare", await shell.run(f"{command} | cat", total_seconds=30, idle_seconds=30)
            )
            _, inside = await typed(command, True)
            if inside.output != bare.output:
                raise RuntimeError(
                    f"terminal bench: {command!r} printed {inside.output!r} sandboxed, {bare.output!r} bare"
                )
        m = await alternate(
            "terminal",
            {key: step for command in COMMANDS for key, step in steps(command).items()},
            samples=samples,
            warmup=warmup,
        )
    finally:
        await shell.close()
        await tool.close()
    rows = [row for command in COMMANDS for row in _rows(command, m)]
    added = ", ".join(f"`{command}` {_added(m, command)}" for command in COMMANDS)
    notes = [
        "terminal rows: Synapse = the free command in its bubblewrap sandbox (the line the tool types), "
        "bare = the same command typed as-is into the same PTY shell; no Temporal involved",
        f"terminal: the sandbox adds per free command (p50, sandboxed − bare): {added}",
    ]
    return Result(rows=rows, notes=notes)


async def _seconds(timed: Awaitable[tuple[float, CommandOutcome]]) -> float:
    """The time of a typed command (its outcome was checked)."""
    return (await timed)[0]


def _added(m: dict[str, Measure], command: str) -> str:
    boxed, bare = m[f"sandboxed {command}"].p50, m[f"bare {command}"].p50
    return "—" if boxed is None or bare is None else f"{boxed - bare:+.1f} ms"


def _rows(command: str, m: dict[str, Measure]) -> list[Row]:
    bare = m[f"bare {command}"]
    return [
        Row(
            f"terminal `{command}`: sandboxed",
            "ms",
            m[f"sandboxed {command}"],
            bare,
            f"a free command in its read-only sandbox, {_added(m, command)} per command; bare: the same "
            "command without a sandbox, same shell",
        ),
        Row(
            "  through TerminalTool.run",
            "ms",
            m[f"tool {command}"],
            bare,
            "what an agent's free call costs outside Temporal: free rules, sandboxed line, result",
        ),
    ]
