"""The `terminal` plugin: one shell per session (kept by this worker), one command per call.

Approval is always needed, except for an allowlisted read-only program (no pipes, redirects or
`;`) inside a trusted folder. Output is sent to the session while the command runs (the
`tool_output` signal, batched) and comes back whole in the result with `exit_status`,
`command_success` and `execution_time`; an approved command runs at most once (`claims`).
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import shlex
import time
from pathlib import Path
from typing import Any, Self

from temporalio import activity

from contracts import ToolCallRequest, ToolDescriptor, ToolOutput, ToolResult, WorkerBinding
from core.settings import Settings

from ..plugin import Tool, cut, one_line
from .backend import TerminalAuthFailed, TerminalBackend, TerminalLost
from .claims import CommandClaims
from .pty_shell import PtyShell
from .shell import Shell
from .ttyd import TtydTerminal

TOOL_ID = "terminal"
TOOL_OUTPUT = "tool_output"
"""The signal that carries output to the session while a command runs."""
FLUSH_SECONDS = 0.5
RESULT_CHARS = 20_000
"""Output kept in the result as text (all of it is in `raw` up to the byte limit)."""
_SHELL_SYNTAX = re.compile(r"[;&|<>`$(){}\n\\*?]")

DESCRIPTOR = ToolDescriptor(
    name=TOOL_ID,
    description=(
        "Run one shell command (bash) in this session's terminal; the terminal keeps its working "
        "directory and environment between commands. A person approves each command unless it is "
        "a read-only program in a trusted folder."
    ),
    arguments_schema={
        "type": "object",
        "properties": {"command": {"type": "string", "description": "The command line to run."}},
        "required": ["command"],
    },
    permissions=["execute"],
    source="builtin",
    capabilities=["streamable"],
    approval="destructive",
)


def command_of(arguments: dict[str, Any]) -> str | None:
    """The `command` argument when it is a non-empty string."""
    command = arguments.get("command")
    return command.strip() if isinstance(command, str) and command.strip() else None


class TerminalTool(Tool):
    """Shells on PTYs of this worker, one per session."""

    DESCRIPTOR = DESCRIPTOR

    def __init__(self, settings: Settings) -> None:
        """Configure from `settings.tools` (nothing starts until a command runs)."""
        super().__init__()
        tools = settings.tools
        self._tools = tools
        self._cwd = (tools.terminal_cwd or Path.cwd()).resolve()
        self._allow = {name.strip() for name in tools.terminal_allow.split(",") if name.strip()}
        trusted = [Path(p.strip()).resolve() for p in tools.terminal_trusted.split(",") if p.strip()]
        self._trusted = trusted or [self._cwd]
        self._timeout = tools.terminal_timeout_seconds
        self._idle = tools.terminal_idle_seconds
        self._claims = CommandClaims(settings.data_dir / "terminal.db")
        self._shells: dict[str, Shell] = {}
        self._locks: dict[str, asyncio.Lock] = {}

    def binding(self) -> WorkerBinding:
        """A session's shell lives in this worker: its later commands come here."""
        return WorkerBinding(
            heartbeat_seconds=self._tools.terminal_heartbeat_seconds,
            wait_seconds=self._tools.terminal_worker_wait_seconds,
        )

    def _backend(self) -> TerminalBackend:
        if self._tools.terminal_backend == "ttyd":
            return TtydTerminal(self._tools.ttyd_url, self._tools.ttyd_credential)
        return PtyShell(self._cwd)

    @classmethod
    def from_settings(cls, settings: Settings) -> Self:
        """The tool as configured."""
        return cls(settings)

    def head(self, call: ToolCallRequest) -> str | None:
        """The program: `ls`, `git`, ... (a `session_prefix` grant allows that program)."""
        command = command_of(call.arguments)
        if command is None:
            return None
        try:
            words = shlex.split(command)
        except ValueError:
            return None
        return words[0] if words else None

    def assess(self, call: ToolCallRequest) -> tuple[bool, str]:
        """Free: an allowlisted program, no shell syntax, inside a trusted folder; else ask."""
        command = command_of(call.arguments)
        if command is None:
            return True, "no command given"
        program = self.head(call)
        if program not in self._allow:
            return True, f"`{program}` is not on the read-only allowlist"
        if _SHELL_SYNTAX.search(command):
            return True, "the command uses shell syntax (pipes, redirects, substitutions, globs)"
        cwd = self._cwd  # the folder the session's terminal is in is only known to its worker
        if not any(cwd == folder or folder in cwd.parents for folder in self._trusted):
            return True, f"{cwd} is not a trusted folder"
        return False, f"`{program}` is read-only and runs in a trusted folder"

    def summarize(self, call: ToolCallRequest) -> str:
        """`terminal: ls -la`."""
        command = command_of(call.arguments)
        return one_line(f"terminal: {command}") if command else super().summarize(call)

    async def run(self, call: ToolCallRequest, claim: str | None) -> ToolResult:
        """Run the command in the session's terminal (started on first use)."""
        command = command_of(call.arguments)
        if command is None:
            return ToolResult(tool_id=TOOL_ID, ok=False, error="terminal needs `command`: a non-empty string")
        if claim is not None and (earlier := await asyncio.to_thread(self._claims.take, claim, command)):
            return earlier
        owner = (activity.info().workflow_id if activity.in_activity() else None) or "local"
        async with self._locks.setdefault(owner, asyncio.Lock()):
            result = await self._run(owner, command, claim)
        if claim is not None:
            await asyncio.to_thread(self._claims.complete, claim, result)
        return result

    async def _run(self, owner: str, command: str, claim: str | None) -> ToolResult:
        fresh = owner not in self._shells
        if fresh:
            shell = Shell(self._backend())
            try:
                await shell.start()
            except (TerminalAuthFailed, TerminalLost) as err:  # an auth failure says so itself
                await shell.close()
                error = str(err) if isinstance(err, TerminalAuthFailed) else f"no terminal: {err}"
                return ToolResult(tool_id=TOOL_ID, ok=False, error=error, metadata={"command": command})
            self._shells[owner] = shell
        shell = self._shells[owner]
        streamer = _Streamer(owner, claim.rsplit("/", 1)[-1] if claim else None)
        try:
            outcome = await shell.run(
                command,
                total_seconds=self._timeout,
                idle_seconds=self._idle,
                on_output=streamer.add,
                cancelled=streamer.tick,
            )
        except TerminalLost as err:
            self._shells.pop(owner, None)
            with contextlib.suppress(Exception):
                await shell.close()
            return ToolResult(
                tool_id=TOOL_ID,
                ok=False,
                error=f"terminal lost: {err}; the next command starts a fresh terminal",
                metadata={"command": command, "terminal_lost": True},
            )
        finally:
            await streamer.flush()
        text = outcome.output
        note = None
        if len(text) > RESULT_CHARS or outcome.truncated_bytes:
            note = f"output cut: {len(text)} characters shown as {RESULT_CHARS}; {outcome.truncated_bytes} bytes not kept"
            text = cut(text, RESULT_CHARS)
        interrupted = {
            "inactivity": f"no output for {self._idle:.0f} s (waiting for input?): interrupted with Ctrl-C",
            "timeout": f"still running after {self._timeout:.0f} s: interrupted with Ctrl-C",
            "cancelled": "cancelled: interrupted with Ctrl-C",
        }.get(outcome.interrupted or "")
        return ToolResult(
            tool_id=TOOL_ID,
            ok=outcome.success,
            content={"output": text, "exit_status": outcome.exit_status, "cwd": outcome.cwd},
            error=interrupted or (None if outcome.success else f"exit status {outcome.exit_status}"),
            metadata={
                "command": command,
                "exit_status": outcome.exit_status,
                "command_success": outcome.success,
                "execution_time": outcome.execution_time,
                "cwd": outcome.cwd,
                **({"fresh_terminal": True} if fresh else {}),
                **({"truncated": note} if note else {}),
            },
        )

    @classmethod
    def describe(cls, content: Any) -> str | None:
        """`$ exit status 0` with the output."""
        if not isinstance(content, dict) or "output" not in content:
            return None
        return f"exit status {content.get('exit_status')}:\n{cut(str(content['output']), 1500)}"


class _Streamer:
    """Output sent to the session while the command runs: batched, at most every `FLUSH_SECONDS`."""

    def __init__(self, owner: str, interaction_id: str | None) -> None:
        self._owner = owner
        self._interaction_id = interaction_id
        self._pending: list[str] = []
        self._sent = 0
        self._last = time.monotonic() - FLUSH_SECONDS
        self._tasks: set[asyncio.Task[None]] = set()
        self._timer: asyncio.TimerHandle | None = None

    def add(self, text: str) -> None:
        self._pending.append(text)
        if self._timer is None:  # at most one flush every FLUSH_SECONDS; the first one at once
            wait = max(FLUSH_SECONDS - (time.monotonic() - self._last), 0.0)
            self._timer = asyncio.get_running_loop().call_later(wait, self._flush_soon)

    def tick(self) -> bool:
        """Polled while the command runs: a heartbeat with the progress (the SDK throttles them;
        without one for `heartbeat_seconds` the worker is taken for gone), and whether to cancel."""
        if not activity.in_activity():
            return False
        activity.heartbeat({"output_chars": self._sent + sum(len(t) for t in self._pending)})
        return activity.is_cancelled()

    def _flush_soon(self) -> None:
        self._timer = None
        task = asyncio.ensure_future(self.flush())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def flush(self) -> None:
        if self._timer is not None:  # only the final flush finds one: nothing is scheduled after it
            self._timer.cancel()
            self._timer = None
        if not self._pending or not activity.in_activity():
            return
        text, self._pending = "".join(self._pending), []
        self._last = time.monotonic()
        self._sent += len(text)
        output = ToolOutput(interaction_id=self._interaction_id, tool_id=TOOL_ID, text=text)
        try:
            await activity.client().get_workflow_handle(self._owner).signal(TOOL_OUTPUT, output)
        except Exception as err:  # the stream is a courtesy; the result carries everything
            activity.logger.info("could not stream terminal output to %s: %s", self._owner, err)
