"""Running one command in its session's terminal, at most once per approval.

An approved command's claim is taken before it is typed and completed with its result (`claims`),
so a retried activity answers with what the first attempt did. A session's commands run one at a
time, in the terminal this worker keeps for it (`terminals`, started on first use); the policy says
what to type and in which sandbox (`policy.TerminalPolicy.launch`). Output goes to the session
while the command runs (`streamer`); the outcome becomes the result and the stream's final chunk
(`result`), and what a sandboxed command leaves of `cd` and `export` is carried back into the
session's shell (`carry`).
"""

from __future__ import annotations

import asyncio

from contracts import SandboxProfile, ToolResult, ToolRun
from core.at_rest import Sealer
from core.settings import Settings

from ...heartbeats import heartbeat_while_running
from ..plugin import claim_key
from .backend import TerminalBackend, TerminalLost
from .chunks import error_chunk
from .claims import CommandClaims
from .command import command_of, unusable
from .policy import UNSANDBOXED, TerminalPolicy
from .pty_shell import PtyShell, terminal_environment
from .result import RAW_BYTES, TOOL_ID, Limits, command_result, final_chunk, refusal, sandbox_failed
from .streamer import Streamer
from .terminals import Terminals
from .ttyd import TtydTerminal

READ_ONLY = "Read-only file system"
"""What a command says when it writes where its sandbox shows the file system read-only."""


class CommandRunner:
    """The commands of this worker's terminals, one terminal per owning workflow (a session or task run)."""

    def __init__(self, settings: Settings, policy: TerminalPolicy) -> None:
        """Configure from `settings.tools` and `policy`; a terminal starts with its first command."""
        tools = settings.tools
        self._tools = tools
        self._policy = policy
        self._env = terminal_environment(
            name.strip() for name in tools.terminal_env.split(",") if name.strip()
        )
        self._limits = Limits(tools.terminal_timeout_seconds, tools.terminal_idle_seconds)
        self._claims = CommandClaims(
            settings.data_dir / "terminal.db", Sealer.of(settings.temporal.codec_keys)
        )
        self.terminals = Terminals(self._backend, settings.data_dir.resolve() / "terminal", RAW_BYTES)
        """The terminals, by the workflow id of their owner."""
        self._locks: dict[str, asyncio.Lock] = {}

    def _backend(self) -> TerminalBackend:
        if self._policy.ttyd:
            return TtydTerminal(self._tools.ttyd_url, self._tools.ttyd_credential)
        return PtyShell(self._policy.cwd, env=self._env)

    async def run(self, run: ToolRun) -> ToolResult:
        """Run the command in the owner's terminal: without an approval only in the free sandbox;
        with one under `run.sandbox`, at most once per `claim_key(run)`."""
        command = command_of(run.call.arguments) or ""
        if (broken := unusable(run.call.arguments)) is not None:
            return refusal(command, broken)
        claim = claim_key(run)
        if claim is not None and (earlier := await asyncio.to_thread(self._claims.take, claim, command)):
            return earlier
        beating = asyncio.create_task(heartbeat_while_running())
        try:
            async with self._locks.setdefault(run.owner_id, asyncio.Lock()):
                result = await self._run(run, command)
        finally:
            beating.cancel()
        if claim is not None:
            await asyncio.to_thread(self._claims.complete, claim, result)
        return result

    async def _run(self, run: ToolRun, command: str) -> ToolResult:
        owner = run.owner_id
        terminal, notes = await self.terminals.get(owner)
        if isinstance(terminal, str):
            return refusal(command, terminal)
        launch = self._policy.launch(
            terminal, command, approved=run.interaction_id is not None, sandbox=run.sandbox
        )
        if isinstance(launch, ToolResult):
            return launch
        line, where = launch
        streamer = Streamer(TOOL_ID, owner, run.interaction_id)
        try:
            outcome = await terminal.shell.run(
                line,
                total_seconds=self._limits.total_seconds,
                idle_seconds=self._limits.idle_seconds,
                on_output=streamer.add,
                cancelled=streamer.tick,
                prompts=where in UNSANDBOXED,
            )
            if outcome.interrupted is None and outcome.prompt is None:
                await terminal.take_back(outcome)
        except asyncio.CancelledError:  # the activity was cancelled: the shell had Ctrl-C
            await streamer.finish(error_chunk("cancelled: interrupted with Ctrl-C", "cancelled", "generic"))
            raise
        except TerminalLost as err:
            await self.terminals.drop(owner)
            error = f"terminal lost: {err}; the next command starts a fresh terminal"
            await streamer.finish(error_chunk(error, "terminal_lost", "generic"))
            return refusal(command, error, terminal_lost=True)
        result = command_result(command, outcome, self._limits, where, **notes)
        if where not in UNSANDBOXED and outcome.interrupted is None and not terminal.scratch.started():
            sandbox_failed(result, outcome)
        elif not result.ok and where == SandboxProfile.WORKSPACE_WRITE and READ_ONLY in outcome.output:
            if (why := self._policy.unwritable_workspace()) is not None:
                result.error = f"{result.error}: {why}"
        await streamer.finish(final_chunk(result, outcome))
        return result
