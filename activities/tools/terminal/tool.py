"""The `terminal` plugin: one shell per session (kept by this worker), one command per call.

A command runs without approval only when the free rules let it (`free`: an allowlisted program,
no shell syntax, in and about the trusted folders) *and* it runs inside the read-only sandbox
(`sandbox`); without bwrap, or on a ttyd terminal, every command asks. An approved command runs
under its sandbox profile (`workspace-write` by default, `read-only`, or `full`), and what it
leaves of `cd` and `export` is carried back into the session's shell (`carry`). Output is sent to
the session while the command runs (`streamer`) and comes back whole in the result with
`exit_status`, `command_success`, `execution_time` and `sandbox`; an approved command runs at most
once (`claims`).
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from pathlib import Path
from typing import Any, Self

from temporalio import activity

from contracts import ArtifactRef, SandboxProfile, ToolCallRequest, ToolDescriptor, ToolResult, WorkerBinding
from core.settings import Settings

from ..plugin import Tool, cut, one_line
from .backend import TerminalBackend, TerminalLost
from .chunks import error_chunk
from .claims import CommandClaims
from .command import command_of, unusable, words_of
from .free import SHELL_SYNTAX, FreeRules
from .pty_shell import PtyShell, terminal_environment
from .result import RAW_BYTES, TOOL_ID, Limits, command_result, final_chunk, refusal
from .sandbox import HOME_SECRET_FILES, HOME_SECRETS, SECRET_FILES, Sandbox
from .shell import CommandOutcome
from .streamer import Streamer, heartbeat_while_running
from .terminals import Terminal, Terminals
from .ttyd import TtydTerminal

logger = logging.getLogger(__name__)

SOURCE_ROOT = Path(__file__).resolve().parents[3]
"""Where Synapse's own packages are (a checkout, or site-packages): read-only in every sandbox."""
TEMPORAL_FILES = ("TEMPORAL_CONFIG_FILE", "TEMPORAL_TLS_CLIENT_KEY_PATH")
"""Variables naming the worker's Temporal profile and client key: covered in every sandbox."""

FREE_SANDBOX = "trusted-read-only"
"""The sandbox of a command that runs without approval, as results and requests name it."""
NO_SANDBOX = "none"
"""What results and requests say of a ttyd terminal's commands: Synapse does not sandbox them."""
TTYD_UNSANDBOXED = "a ttyd terminal runs elsewhere and Synapse does not sandbox it"
PROGRAM = "program"
"""Input typed into a program waiting at its prompt (only one started with `full`, or on ttyd)."""
PROGRAM_INPUT = "typed into the program waiting at its prompt, which runs without a sandbox"
UNSANDBOXED = (NO_SANDBOX, PROGRAM, str(SandboxProfile.FULL))
"""Where a command runs as typed: it may leave a program at its prompt (OSC 697)."""

DESCRIPTOR = ToolDescriptor(
    name=TOOL_ID,
    description=(
        "Run one shell command (bash) in this session's terminal; the terminal keeps its working "
        "directory and environment between commands. A person approves each command unless it is "
        "a read-only program reading the trusted folders (it then runs in a read-only sandbox). "
        "When a program is left waiting at its prompt (`waiting_for_input` in the result), the "
        "next command is typed into that program."
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


class TerminalTool(Tool):
    """Shells on PTYs of this worker (or a ttyd), one per session."""

    DESCRIPTOR = DESCRIPTOR

    def __init__(self, settings: Settings) -> None:
        """Configure from `settings.tools` (nothing starts until `prepare` or a command)."""
        super().__init__()
        tools = settings.tools
        self._tools = tools
        self._ttyd = tools.terminal_backend == "ttyd"
        self._cwd = (tools.terminal_cwd or Path.cwd()).resolve()
        trusted = [Path(p.strip()) for p in tools.terminal_trusted.split(",") if p.strip()]
        self._free = FreeRules(
            (name.strip() for name in tools.terminal_allow.split(",") if name.strip()), trusted or [self._cwd]
        )
        self._workspace = (tools.terminal_workspace or self._cwd).resolve()
        home = Path.home()
        self._hidden_dirs = (settings.data_dir, *(home / name for name in (".synapse", *HOME_SECRETS)))
        """The worker's own data, its settings and credentials in its home: no sandbox shows them."""
        self._hidden_files = (
            Path(".env"),
            settings.agents_file or Path("synapse.toml"),
            *map(Path, SECRET_FILES),
            *(home / name for name in HOME_SECRET_FILES),
            *(Path(os.environ[name]) for name in TEMPORAL_FILES if os.environ.get(name)),
        )
        """The settings the worker reads at its next start, and the system's and its Temporal
        client's secrets: no sandbox shows them, nor lets the settings be created."""
        self._env = terminal_environment(
            name.strip() for name in tools.terminal_env.split(",") if name.strip()
        )
        self._limits = Limits(tools.terminal_timeout_seconds, tools.terminal_idle_seconds)
        self._claims = CommandClaims(settings.data_dir / "terminal.db")
        self._terminals = Terminals(self._backend, settings.data_dir.resolve() / "terminal", RAW_BYTES)
        self._locks: dict[str, asyncio.Lock] = {}
        self._found: tuple[Sandbox | None, str] | None = None

    @classmethod
    def from_settings(cls, settings: Settings) -> Self:
        """The tool as configured."""
        return cls(settings)

    def prepare(self) -> None:
        """Look for bwrap once, and say in the log what that means."""
        sandbox, why = self._sandbox()
        if sandbox is not None:
            logger.info("terminal sandbox: %s; free commands read %s", sandbox.bwrap, self._free.trusted)
            if not sandbox.writable:
                logger.warning(
                    "the terminal's workspace %s lies in Synapse's own installation: workspace-write "
                    "commands cannot write there (they could change what the worker runs next); set "
                    "SYNAPSE_TERMINAL_CWD or SYNAPSE_TERMINAL_WORKSPACE to a project of its own",
                    self._workspace,
                )
        elif not self._ttyd:
            logger.warning(
                "terminal sandbox unavailable: %s. Every terminal command needs approval, and approved "
                "commands run only with the `full` profile (no sandbox).",
                why,
            )

    def _sandbox(self) -> tuple[Sandbox | None, str]:
        """The sandbox of this worker's PTY terminals, or why there is none (looked for once)."""
        if self._ttyd:
            return None, TTYD_UNSANDBOXED
        if self._found is None:
            self._found = Sandbox.find(
                self._tools.terminal_bwrap,
                self._free.trusted,
                self._workspace,
                self._hidden_dirs,
                self._hidden_files,
                protected=(Path(sys.prefix), Path(sys.base_prefix), SOURCE_ROOT),
                home=Path.home(),
                host_network=self._tools.terminal_network == "host",
            )
        return self._found

    def sandbox(self, call: ToolCallRequest, state: dict[str, Any]) -> SandboxProfile | None:
        """Approved commands on PTY terminals run in `SYNAPSE_TERMINAL_SANDBOX` unless chosen
        otherwise; None on ttyd, and for input typed into a program waiting at its prompt."""
        return None if self._ttyd or state.get("waiting_for_input") else self._tools.terminal_sandbox

    def _where(self, state: dict[str, Any]) -> Path:
        """The folder the session's terminal is really in (its last result), else where one starts."""
        cwd = state.get("cwd")
        return Path(cwd) if isinstance(cwd, str) and cwd else self._cwd

    def _asks(self, command: str, cwd: Path) -> str | None:
        """Why `command` needs approval in `cwd`; None: it may run free, in the read-only sandbox."""
        why = self._free.why_not(command, cwd)
        if why is not None:
            return why
        if self._ttyd:
            return f"{TTYD_UNSANDBOXED}: every command there needs approval"
        sandbox, unavailable = self._sandbox()
        return (
            None if sandbox is not None else f"no sandbox on this worker ({unavailable}): every command asks"
        )

    def assess(self, call: ToolCallRequest, state: dict[str, Any]) -> tuple[bool, str]:
        """Free: an allowlisted program reading the trusted folders, and a sandbox to run it in; else
        ask. A command that cannot run at all (none given, control characters) is refused unasked."""
        if (broken := unusable(call.arguments)) is not None:
            return False, f"it is refused without running: {broken}"
        if state.get("waiting_for_input"):
            return True, f"it is {PROGRAM_INPUT}"
        why = self._asks(command_of(call.arguments) or "", self._where(state))
        if why is not None:
            return True, why
        return (
            False,
            f"`{self.head(call)}` is read-only: it runs without approval in a read-only sandbox of the trusted folders",
        )

    def context(self, call: ToolCallRequest, state: dict[str, Any]) -> dict[str, Any]:
        """`cwd`: where the command runs (None for a ttyd terminal until a command says);
        `sandbox`: what it may reach (the workflow puts the profile chosen for an approved call)."""
        if self._ttyd:
            cwd = state.get("cwd")
            return {
                "cwd": cwd if isinstance(cwd, str) else None,
                "sandbox": f"{NO_SANDBOX}: {TTYD_UNSANDBOXED}",
            }
        where = str(self._where(state))
        if state.get("waiting_for_input"):
            return {"cwd": where, "sandbox": f"{SandboxProfile.FULL}: {PROGRAM_INPUT}"}
        if not self.assess(call, state)[0]:
            return {"cwd": where, "sandbox": FREE_SANDBOX}
        context: dict[str, Any] = {"cwd": where, "sandbox": str(self._tools.terminal_sandbox)}
        if self._sandbox()[0] is None:
            context["sandbox_unavailable"] = f"{self._sandbox()[1]}: only the `full` profile can run"
        return context

    def binding(self) -> WorkerBinding:
        """A session's shell lives in this worker: its later commands come here."""
        return WorkerBinding(
            heartbeat_seconds=self._tools.terminal_heartbeat_seconds,
            wait_seconds=self._tools.terminal_worker_wait_seconds,
        )

    def head(self, call: ToolCallRequest) -> str | None:
        """The program: `ls`, `git`, ... (a `session_prefix` grant allows that program). None for a
        command with shell syntax: `git status; rm -rf ~` is more than `git`."""
        command = command_of(call.arguments)
        words = words_of(command) if command and not SHELL_SYNTAX.search(command) else None
        return words[0] if words else None

    def summarize(self, call: ToolCallRequest) -> str:
        """`terminal: ls -la`."""
        command = command_of(call.arguments)
        return one_line(f"terminal: {command}") if command else super().summarize(call)

    async def run(
        self, call: ToolCallRequest, claim: str | None, sandbox: SandboxProfile | None
    ) -> ToolResult:
        """Run the command in the session's terminal (started on first use): without a claim only
        in the free sandbox; with one under `sandbox` (None: `SYNAPSE_TERMINAL_SANDBOX`, or typed
        into the program waiting at its prompt)."""
        command = command_of(call.arguments) or ""
        if (broken := unusable(call.arguments)) is not None:
            return refusal(command, broken)
        if claim is not None and (earlier := await asyncio.to_thread(self._claims.take, claim, command)):
            return earlier
        owner = (activity.info().workflow_id if activity.in_activity() else None) or "local"
        beating = asyncio.create_task(heartbeat_while_running())
        try:
            async with self._locks.setdefault(owner, asyncio.Lock()):
                result = await self._run(owner, command, claim, sandbox)
        finally:
            beating.cancel()
        if claim is not None:
            await asyncio.to_thread(self._claims.complete, claim, result)
        return result

    def _backend(self) -> TerminalBackend:
        if self._ttyd:
            return TtydTerminal(self._tools.ttyd_url, self._tools.ttyd_credential)
        return PtyShell(self._cwd, env=self._env)

    def _launch(
        self, terminal: Terminal, command: str, claim: str | None, sandbox: SandboxProfile | None
    ) -> tuple[str, str] | ToolResult:
        """What to type for the command and where it runs; or why it does not run."""
        shell = terminal.shell
        said = terminal.state()
        if shell.foreground is not None:
            if claim is None:
                return refusal(
                    command,
                    "a program is waiting for input at its prompt: what is typed into it needs a "
                    "person's approval, even a command that is free in the shell",
                    **said,
                )
            if sandbox not in (None, SandboxProfile.FULL):
                return refusal(
                    command,
                    f"not run: it was approved for the {sandbox} sandbox, but it would be {PROGRAM_INPUT}; "
                    "ask again",
                    **said,
                )
            return command, PROGRAM
        if claim is None:  # the free rules again, where the terminal really is: only then, sandboxed
            why = self._asks(command, Path(shell.cwd) if shell.cwd else self._cwd)
            free = self._sandbox()[0]
            words = words_of(command)
            if why is not None or free is None or not words:
                return refusal(
                    command, f"not run: it needs a person's approval ({why})", needs_approval=True, **said
                )
            return free.free_line(words, terminal.scratch), FREE_SANDBOX
        if self._ttyd:
            return command, NO_SANDBOX
        profile = sandbox or self._tools.terminal_sandbox
        if profile == SandboxProfile.FULL:
            return command, str(profile)
        approved, unavailable = self._sandbox()
        if approved is None:
            return refusal(
                command,
                f"not run: the {profile} sandbox cannot start on this worker ({unavailable}); "
                "approve it with sandbox `full` to run it without one",
                sandbox=str(profile),
                sandbox_failed=True,
                **said,
            )
        return approved.approved_line(profile, command, terminal.scratch, terminal.overlay.script()), str(
            profile
        )

    async def _run(
        self, owner: str, command: str, claim: str | None, sandbox: SandboxProfile | None
    ) -> ToolResult:
        terminal, notes = await self._terminals.get(owner)
        if isinstance(terminal, str):
            return refusal(command, terminal)
        launch = self._launch(terminal, command, claim, sandbox)
        if isinstance(launch, ToolResult):
            return launch
        line, where = launch
        shell = terminal.shell
        streamer = Streamer(TOOL_ID, owner, claim.rsplit("/", 1)[-1] if claim else None)
        try:
            outcome = await shell.run(
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
            await self._terminals.drop(owner)
            error = f"terminal lost: {err}; the next command starts a fresh terminal"
            await streamer.finish(error_chunk(error, "terminal_lost", "generic"))
            return refusal(command, error, terminal_lost=True)
        result = command_result(command, outcome, self._limits, where, **notes)
        if where not in UNSANDBOXED and outcome.interrupted is None and not terminal.scratch.started():
            _sandbox_failed(result, outcome)
        await streamer.finish(final_chunk(result, outcome))
        return result

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


def _sandbox_failed(result: ToolResult, outcome: CommandOutcome) -> None:
    """The sandbox did not run the command (bwrap refused, a folder is missing): say so plainly."""
    said = [line for line in outcome.output.splitlines() if line.startswith("bwrap: ")]
    reason = said[-1] if said else f"bwrap ended with exit status {outcome.exit_status}"
    result.ok = False
    result.error = f"the sandbox did not run the command: {reason}"
    result.metadata.update(sandbox_failed=True, command_success=False)
