"""The `terminal` plugin: one shell per session (kept by this worker), one command per call.

The plugin only composes the package's parts behind the `Tool` interface: what runs free and what
asks, and in which sandbox an approved command runs (`policy`); running a command at most once per
approval, its output streamed while it runs (`run`, `streamer`); and what its outcome tells the
agent, the stream and people (`result`): the whole output with `exit_status`, `command_success`,
`execution_time` and `sandbox`.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Self

from contracts import (
    ArtifactRef,
    CallContext,
    SandboxProfile,
    ToolCallRequest,
    ToolDescriptor,
    ToolResult,
    ToolRun,
    WorkerBinding,
)
from core.rules.match import CallFacts
from core.settings import Settings

from ..plugin import Tool, one_line
from .code import runs_code
from .command import command_of
from .policy import TerminalPolicy
from .result import TOOL_ID, describe_output, output_preview
from .run import CommandRunner

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
        self._tools = settings.tools
        self.policy = TerminalPolicy(settings)
        """What runs free, what asks, and where."""
        self.runner = CommandRunner(settings, self.policy)
        """The session's terminals and the commands run in them."""

    @classmethod
    def from_settings(cls, settings: Settings) -> Self:
        """The tool as configured."""
        return cls(settings)

    def prepare(self) -> None:
        """Look for bwrap once, and say in the log what that means."""
        self.policy.prepare()

    def assess(self, call: ToolCallRequest, state: dict[str, Any]) -> tuple[bool, str]:
        """Free: an allowlisted program reading the trusted folders, and a sandbox to run it in; else
        ask (`TerminalPolicy.assess`)."""
        return self.policy.assess(call, state)

    def context(self, call: ToolCallRequest, state: dict[str, Any]) -> CallContext:
        """`cwd` and `sandbox`: where the command runs and what it may reach (`TerminalPolicy.context`)."""
        return self.policy.context(call, state)

    def sandbox(self, call: ToolCallRequest, state: dict[str, Any]) -> SandboxProfile | None:
        """`SYNAPSE_TERMINAL_SANDBOX` on PTY terminals; None on ttyd, and for input typed into a
        program waiting at its prompt (`TerminalPolicy.profile`)."""
        return self.policy.profile(state)

    def rule_facts(self, call: ToolCallRequest, needs_approval: bool) -> CallFacts:
        """A simple command's words too (a prefix rule matches those alone; `TerminalPolicy.words`),
        and why they can run other code (then no allow rule on a prefix covers it; `code.runs_code`)."""
        words = self.policy.words(call)
        return replace(
            super().rule_facts(call, needs_approval),
            words=words,
            runs_code=runs_code(words) if words else None,
        )

    def head(self, call: ToolCallRequest) -> str | None:
        """The program and its subcommand (`ls`, `git status`); None for a command with shell syntax
        or one that can run other code (`TerminalPolicy.head`)."""
        return self.policy.head(call)

    def binding(self) -> WorkerBinding:
        """A session's shell lives in this worker: its later commands come here."""
        return WorkerBinding(
            heartbeat_seconds=self._tools.terminal_heartbeat_seconds,
            wait_seconds=self._tools.terminal_worker_wait_seconds,
        )

    def summarize(self, call: ToolCallRequest) -> str:
        """`terminal: ls -la`."""
        command = command_of(call.arguments)
        return one_line(f"terminal: {command}") if command else super().summarize(call)

    async def run(self, run: ToolRun) -> ToolResult:
        """Run the command in the session's terminal (started on first use): without an approval
        only in the free sandbox; with one under `run.sandbox` (None: `SYNAPSE_TERMINAL_SANDBOX`,
        or typed into the program waiting at its prompt), at most once."""
        return await self.runner.run(run)

    async def close(self) -> None:
        """End this worker's terminals (their shells, and what runs in them) and remove their files."""
        await self.runner.terminals.close()

    @classmethod
    def preview(cls, content: Any, budget: int, ref: ArtifactRef) -> Any:
        """The output's beginning and end (errors are often last), naming the artifact with all of it."""
        if isinstance(content, dict) and isinstance(content.get("output"), str):
            return output_preview(content, budget, ref)
        return super().preview(content, budget, ref)

    @classmethod
    def describe(cls, content: Any) -> str | None:
        """`exit status 0:` with the output."""
        return describe_output(content) if isinstance(content, dict) and "output" in content else None
