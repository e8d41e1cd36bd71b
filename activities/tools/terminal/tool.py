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

from contracts import ArtifactRef, ToolCallRequest, ToolDescriptor, ToolOutput, ToolResult, WorkerBinding
from core.settings import Settings

from ..plugin import Tool, cut, one_line
from .backend import TerminalAuthFailed, TerminalBackend, TerminalLost
from .chunks import TerminalChunk, complete_chunk, error_chunk
from .claims import CommandClaims
from .pty_shell import PtyShell
from .shell import CommandOutcome, Shell
from .ttyd import TtydTerminal

TOOL_ID = "terminal"
TOOL_OUTPUT = "tool_output"
"""The signal that carries output to the session while a command runs."""
FLUSH_SECONDS = 0.5
OUTPUT_CHARS = 1_000_000
"""Output kept in the result (as text); a result larger than `inline_bytes` is stored as an artifact
by the runner, and history, the stream and the agent carry its `preview`."""
RAW_BYTES = 2_000_000
"""Raw output (escape sequences included) a command may produce before the rest is dropped."""
_SHELL_SYNTAX = re.compile(r"[;&|<>`$(){}\n\\*?]")

DESCRIPTOR = ToolDescriptor(
    name=TOOL_ID,
    description=(
        "Run one shell command (bash) in this session's terminal; the terminal keeps its working "
        "directory and environment between commands. A person approves each command unless it is "
        "a read-only program in a trusted folder. When a program is left waiting at its prompt "
        "(`waiting_for_input` in the result), the next command is typed into that program."
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

    def context(self, call: ToolCallRequest) -> dict[str, Any]:
        """`cwd`: where a fresh terminal starts (the workflow knows where the session's one is now);
        None for a ttyd terminal until its first command says."""
        return {"cwd": None if self._tools.terminal_backend == "ttyd" else str(self._cwd)}

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
        beating = asyncio.create_task(_heartbeat_while_running())
        try:
            async with self._locks.setdefault(owner, asyncio.Lock()):
                result = await self._run(owner, command, claim)
        finally:
            beating.cancel()
        if claim is not None:
            await asyncio.to_thread(self._claims.complete, claim, result)
        return result

    async def _run(self, owner: str, command: str, claim: str | None) -> ToolResult:
        gone = self._shells.get(owner)
        reconnected = gone is not None and gone.backend.ended  # it exited or dropped while idle
        if gone is not None and reconnected:
            del self._shells[owner]
            await gone.close()
        fresh = owner not in self._shells
        if fresh:
            shell = Shell(self._backend(), max_bytes=RAW_BYTES)
            try:
                await shell.start()
            except (TerminalAuthFailed, TerminalLost) as err:  # an auth failure says so itself
                await shell.close()
                error = str(err) if isinstance(err, TerminalAuthFailed) else f"no terminal: {err}"
                return ToolResult(tool_id=TOOL_ID, ok=False, error=error, metadata={"command": command})
            self._shells[owner] = shell
        shell = self._shells[owner]
        if shell.foreground is not None and claim is None:
            return ToolResult(
                tool_id=TOOL_ID,
                ok=False,
                error="a program is waiting for input at its prompt: what is typed into it needs a "
                "person's approval, even a command that is free in the shell",
                metadata={"command": command, "waiting_for_input": True},
            )
        streamer = _Streamer(owner, claim.rsplit("/", 1)[-1] if claim else None)
        try:
            outcome = await shell.run(
                command,
                total_seconds=self._timeout,
                idle_seconds=self._idle,
                on_output=streamer.add,
                cancelled=streamer.tick,
            )
        except asyncio.CancelledError:  # the activity was cancelled: the shell had Ctrl-C
            await streamer.finish(error_chunk("cancelled: interrupted with Ctrl-C", "cancelled", "generic"))
            raise
        except TerminalLost as err:
            self._shells.pop(owner, None)
            with contextlib.suppress(Exception):
                await shell.close()
            error = f"terminal lost: {err}; the next command starts a fresh terminal"
            await streamer.finish(error_chunk(error, "terminal_lost", "generic"))
            return ToolResult(
                tool_id=TOOL_ID, ok=False, error=error, metadata={"command": command, "terminal_lost": True}
            )
        result = self._result(command, outcome, fresh)
        if reconnected:
            result.metadata["reconnected"] = "the terminal had gone while idle: this command ran in a new one"
        await streamer.finish(self._final_chunk(result, outcome))
        return result

    def _result(self, command: str, outcome: CommandOutcome, fresh: bool) -> ToolResult:
        """The outcome for the agent: all of the output (the runner stores a large one as an artifact)."""
        text = outcome.output
        note = None
        if len(text) > OUTPUT_CHARS or outcome.truncated_bytes:
            note = (
                f"output cut: {len(text):,} characters kept as {min(len(text), OUTPUT_CHARS):,}; "
                f"{outcome.truncated_bytes:,} raw bytes past the {RAW_BYTES:,}-byte limit not kept"
            )
            text = cut(text, OUTPUT_CHARS)
        interrupted = {
            "inactivity": f"no output for {self._idle:.0f} s (waiting for input?): interrupted with Ctrl-C",
            "timeout": f"still running after {self._timeout:.0f} s: interrupted with Ctrl-C",
            "cancelled": "cancelled: interrupted with Ctrl-C",
        }.get(outcome.interrupted or "")
        waiting = {"waiting_for_input": outcome.prompt} if outcome.prompt is not None else {}
        return ToolResult(
            tool_id=TOOL_ID,
            ok=outcome.success,
            content={"output": text, "exit_status": outcome.exit_status, "cwd": outcome.cwd, **waiting},
            error=interrupted or (None if outcome.success else f"exit status {outcome.exit_status}"),
            metadata={
                "command": command,
                "exit_status": outcome.exit_status,
                "command_success": outcome.success,
                "execution_time": outcome.execution_time,
                "cwd": outcome.cwd,
                "terminal_type": outcome.terminal_type,
                **waiting,
                **({"fresh_terminal": True} if fresh else {}),
                **({"truncated": note} if note else {}),
            },
        )

    @staticmethod
    def _final_chunk(result: ToolResult, outcome: CommandOutcome) -> TerminalChunk:
        """`complete` with the exit status and time, or `error` when the command was interrupted."""
        if outcome.interrupted is not None:
            return error_chunk(
                result.error or outcome.interrupted, outcome.interrupted, outcome.terminal_type
            )
        if outcome.prompt is not None:
            summary = f"waiting for input at {outcome.prompt!r} after {outcome.execution_time:.1f} s"
        else:
            summary = f"exit status {outcome.exit_status} after {outcome.execution_time:.1f} s"
        return complete_chunk(
            summary,
            execution_time=outcome.execution_time,
            success=outcome.success,
            exit_status=outcome.exit_status,
            terminal_type=outcome.terminal_type,
        )

    @classmethod
    def preview(cls, content: Any, budget: int, ref: ArtifactRef) -> Any:
        """The output's beginning and end (errors are often last), naming the artifact with all of it."""
        if not isinstance(content, dict) or not isinstance(content.get("output"), str):
            return super().preview(content, budget, ref)
        output: str = content["output"]
        half = max(budget // 4, 200)
        shown = f"{output[:half]}\n[... {len(output):,} characters in all: artifact {ref.artifact_id} ...]\n{output[-half:]}"
        return {**content, "output": shown}

    @classmethod
    def describe(cls, content: Any) -> str | None:
        """`$ exit status 0` with the output."""
        if not isinstance(content, dict) or "output" not in content:
            return None
        return f"exit status {content.get('exit_status')}:\n{cut(str(content['output']), 1500)}"


async def _heartbeat_while_running() -> None:
    """Heartbeats for the whole run (starting a terminal, waiting for the session's previous
    command): only a worker that is gone stops them."""
    while activity.in_activity():
        activity.heartbeat()
        await asyncio.sleep(1.0)


class _Streamer:
    """Output sent to the session while the command runs, as typed chunks (`tool_output` signals):
    batched, at most every `FLUSH_SECONDS`; the final chunk (`complete` or `error`) last."""

    def __init__(self, owner: str, interaction_id: str | None) -> None:
        self._owner = owner
        self._interaction_id = interaction_id
        self._pending: list[TerminalChunk] = []
        self._sent = 0
        self._last = time.monotonic() - FLUSH_SECONDS
        self._tasks: set[asyncio.Task[None]] = set()
        self._timer: asyncio.TimerHandle | None = None
        self._sending = asyncio.Lock()
        self._last_type: str | None = None
        """The type of the last chunk sent."""

    def add(self, chunk: TerminalChunk) -> None:
        last = self._pending[-1] if self._pending else None
        if last is not None and last.type == chunk.type == "content":
            last.extend(chunk.content, chunk.metadata["raw_length"])
        elif chunk.type == "thinking" and (last.type if last else self._last_type) == "thinking":
            return  # one chunk per spinner, not one per frame (the shell reports every frame)
        else:
            self._pending.append(chunk)
        if self._timer is None:  # at most one flush every FLUSH_SECONDS; the first one at once
            wait = max(FLUSH_SECONDS - (time.monotonic() - self._last), 0.0)
            self._timer = asyncio.get_running_loop().call_later(wait, self._flush_soon)

    def tick(self) -> bool:
        """Polled while the command runs: whether the activity was cancelled (heartbeats, sent by
        `_heartbeat_while_running`, bring the cancel)."""
        return activity.in_activity() and activity.is_cancelled()

    def _flush_soon(self) -> None:
        self._timer = None
        task = asyncio.ensure_future(self.flush())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def finish(self, final: TerminalChunk) -> None:
        """Send what is left, then the final chunk."""
        if self._timer is not None:  # nothing is scheduled after the final flush
            self._timer.cancel()
            self._timer = None
        self._pending.append(final)
        await self.flush()

    async def flush(self) -> None:
        async with self._sending:  # in order, one batch at a time
            chunks, self._pending = self._pending, []
            self._last_type = chunks[-1].type if chunks else self._last_type
            self._last = time.monotonic()
            self._sent += sum(len(c.content) for c in chunks)
            if not activity.in_activity():
                return
            handle = activity.client().get_workflow_handle(self._owner)
            for chunk in chunks:
                output = ToolOutput(
                    interaction_id=self._interaction_id,
                    tool_id=TOOL_ID,
                    text=chunk.content,
                    chunk_type=chunk.type,
                    metadata=chunk.metadata,
                )
                try:
                    await handle.signal(TOOL_OUTPUT, output)
                except Exception as err:  # the stream is a courtesy; the result carries everything
                    activity.logger.info("could not stream terminal output to %s: %s", self._owner, err)
                    return
