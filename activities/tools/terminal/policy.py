"""The terminal's approval policy: what runs free, what asks, and in which sandbox a command runs.

A command runs without approval only when the free rules let it (`free`: an allowlisted program,
no shell syntax, in and about the trusted folders) *and* this worker has the read-only sandbox to
run it in (`sandbox`); without bwrap, or on a ttyd terminal, every command asks. When a command
is launched the rules are checked again where the terminal really is (`launch`): a free command
is typed into the read-only sandbox, an approved one into its profile's (`workspace-write` by
default, `read-only`, or `full`), and input for a program waiting at its prompt only when it was
approved to run without a sandbox.
"""

from __future__ import annotations

import logging
import os
import shlex
import sys
from pathlib import Path
from typing import Any

from contracts import CallContext, SandboxProfile, ToolCallRequest, ToolResult
from core.settings import Settings

from .code import head
from .command import command_of, unusable, words_of
from .free import SHELL_SYNTAX, FreeRules
from .result import refusal
from .sandbox import HOME_SECRET_FILES, HOME_SECRETS, SECRET_FILES, Sandbox
from .terminals import Terminal

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


class TerminalPolicy:
    """The rules of this worker's terminals, from `settings.tools`; bwrap is looked for once."""

    def __init__(self, settings: Settings) -> None:
        """Configure (nothing is looked for until `prepare` or a first assessment)."""
        tools = settings.tools
        self._tools = tools
        self.ttyd = tools.terminal_backend == "ttyd"
        """The terminals are ttyd's (elsewhere, never sandboxed), not PTYs of this worker."""
        self.cwd = (tools.terminal_cwd or Path.cwd()).resolve()
        """Where a new terminal starts."""
        trusted = [Path(p.strip()) for p in tools.terminal_trusted.split(",") if p.strip()]
        self._free = FreeRules(
            (name.strip() for name in tools.terminal_allow.split(",") if name.strip()), trusted or [self.cwd]
        )
        self._workspace = (tools.terminal_workspace or self.cwd).resolve()
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
        self._found: tuple[Sandbox | None, str] | None = None

    def prepare(self) -> None:
        """Look for bwrap once, and say in the log what that means."""
        sandbox, why = self.sandbox()
        if sandbox is not None:
            logger.info(
                "terminal sandbox: %s; its commands run as uid %s; free commands read %s",
                sandbox.bwrap,
                sandbox.confinement.uid,
                self._free.trusted,
            )
            for gap in sandbox.confinement.gaps:
                logger.warning("terminal sandbox: %s", gap)
            for profile in (SandboxProfile.READ_ONLY, SandboxProfile.WORKSPACE_WRITE):
                if (closed := sandbox.unwritable_tmps(profile)) and sandbox.confinement.landlock:
                    logger.warning(
                        "%s commands cannot write %s: a folder they show read-only lies there, and its "
                        "FIFOs would be writable too; keep trusted folders and the workspace out of them",
                        profile,
                        ", ".join(map(str, closed)),
                    )
            if (unwritable := self.unwritable_workspace()) is not None:
                logger.warning("%s", unwritable)
        elif not self.ttyd:
            logger.warning(
                "terminal sandbox unavailable: %s. Every terminal command needs approval, and approved "
                "commands run only with the `full` profile (no sandbox).",
                why,
            )

    def unwritable_workspace(self) -> str | None:
        """Why `workspace-write` commands cannot write the workspace (None: they can)."""
        sandbox = self.sandbox()[0]
        if sandbox is None or sandbox.writable:
            return None
        return (
            f"the terminal's workspace {self._workspace} lies in Synapse's own installation, which "
            "workspace-write commands cannot change (they could change what the worker runs next); set "
            "SYNAPSE_TERMINAL_CWD or SYNAPSE_TERMINAL_WORKSPACE to a project of its own (`synapse up` "
            "uses .synapse/workspace unless one is set)"
        )

    def sandbox(self) -> tuple[Sandbox | None, str]:
        """The sandbox of this worker's PTY terminals, or why there is none (looked for once)."""
        if self.ttyd:
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
                uid=self._tools.terminal_sandbox_uid,
            )
            if self._found[0] is not None:
                self._share(self._found[0])
        return self._found

    def _share(self, sandbox: Sandbox) -> None:
        """Make the workspace writable to the sandbox's user (a root worker's), and say how it went."""
        granted = sandbox.share_workspace()
        if granted is None:
            return
        uid = sandbox.confinement.uid
        if granted.unsupported is not None:
            logger.warning(
                "workspace-write commands run as uid %s and can write in %s only what that uid may: %s "
                "(chown the workspace to it, or put it on a file system with ACLs)",
                uid,
                sandbox.workspace,
                granted.unsupported,
            )
        elif granted.failed:
            logger.warning(
                "workspace-write commands run as uid %s: %s entries of %s could not be given to it "
                "(they stay unwritable to its commands)",
                uid,
                granted.failed,
                sandbox.workspace,
            )
        else:
            logger.info(
                "workspace-write commands run as uid %s: %s ACL entries added in %s",
                uid,
                granted.changed,
                sandbox.workspace,
            )

    def profile(self, state: dict[str, Any]) -> SandboxProfile | None:
        """Approved commands on PTY terminals run in `SYNAPSE_TERMINAL_SANDBOX` unless chosen
        otherwise; None on ttyd, and for input typed into a program waiting at its prompt."""
        return None if self.ttyd or state.get("waiting_for_input") else self._tools.terminal_sandbox

    def _where(self, state: dict[str, Any]) -> Path:
        """The folder the session's terminal is really in (its last result), else where one starts."""
        cwd = state.get("cwd")
        return Path(cwd) if isinstance(cwd, str) and cwd else self.cwd

    def _asks(self, command: str, cwd: Path) -> str | None:
        """Why `command` needs approval in `cwd`; None: it may run free, in the read-only sandbox."""
        why = self._free.why_not(command, cwd)
        if why is not None:
            return why
        if self.ttyd:
            return f"{TTYD_UNSANDBOXED}: every command there needs approval"
        sandbox, unavailable = self.sandbox()
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

    def context(self, call: ToolCallRequest, state: dict[str, Any]) -> CallContext:
        """`cwd`: where the command runs (None for a ttyd terminal until a command says);
        `sandbox`: what it may reach (the workflow puts the profile chosen for an approved call)."""
        if self.ttyd:
            cwd = state.get("cwd")
            return CallContext(
                cwd=cwd if isinstance(cwd, str) else None, sandbox=NO_SANDBOX, sandbox_note=TTYD_UNSANDBOXED
            )
        where = str(self._where(state))
        if state.get("waiting_for_input"):
            return CallContext(cwd=where, sandbox=str(SandboxProfile.FULL), sandbox_note=PROGRAM_INPUT)
        if not self.assess(call, state)[0]:
            return CallContext(cwd=where, sandbox=FREE_SANDBOX)
        unavailable = self.sandbox()[1] if self.sandbox()[0] is None else None
        return CallContext(
            cwd=where,
            sandbox=str(self._tools.terminal_sandbox),
            sandbox_unavailable=f"{unavailable}: only the `full` profile can run" if unavailable else None,
        )

    def head(self, call: ToolCallRequest) -> str | None:
        """What a `session_prefix` grant allows: the program and, for one with subcommands, its
        subcommand (`ls`, `git status`; `code.head`). None for a command with shell syntax
        (`git status; rm -rf ~` is more than `git status`) or one that can run other code
        (``git -c core.fsmonitor=… status``): only the exact call can be granted."""
        words = self.words(call)
        found = head(words) if words else None
        return shlex.join(found) if found else None

    def words(self, call: ToolCallRequest) -> tuple[str, ...] | None:
        """The words of a simple command: one program and its arguments, no shell syntax (no `;`,
        `&&`, `|`, redirections, substitutions, globs); None for anything more."""
        command = command_of(call.arguments)
        words = words_of(command) if command and not SHELL_SYNTAX.search(command) else None
        return tuple(words) if words else None

    def launch(
        self, terminal: Terminal, command: str, *, approved: bool, sandbox: SandboxProfile | None
    ) -> tuple[str, str] | ToolResult:
        """What to type for the command and where it runs; or why it does not run.

        Args:
            terminal: The session's terminal, where it really is now.
            command: The command as the agent gave it.
            approved: A person approved it; else it runs only if free, in the read-only sandbox.
            sandbox: The profile it was approved for (None: `SYNAPSE_TERMINAL_SANDBOX`, or typed
                into the program waiting at its prompt).
        """
        shell = terminal.shell
        said = terminal.state()
        if shell.foreground is not None:
            if not approved:
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
        if not approved:  # the free rules again, where the terminal really is: only then, sandboxed
            why = self._asks(command, Path(shell.cwd) if shell.cwd else self.cwd)
            free = self.sandbox()[0]
            words = words_of(command)
            if why is not None or free is None or not words:
                return refusal(
                    command, f"not run: it needs a person's approval ({why})", needs_approval=True, **said
                )
            return free.free_line(self._free.words(words), terminal.scratch), FREE_SANDBOX
        if self.ttyd:
            return command, NO_SANDBOX
        profile = sandbox or self._tools.terminal_sandbox
        if profile == SandboxProfile.FULL:
            return command, str(profile)
        found, unavailable = self.sandbox()
        if found is None:
            return refusal(
                command,
                f"not run: the {profile} sandbox cannot start on this worker ({unavailable}); "
                "approve it with sandbox `full` to run it without one",
                sandbox=str(profile),
                sandbox_failed=True,
                **said,
            )
        line = found.approved_line(profile, command, terminal.scratch, terminal.overlay.script())
        return line, str(profile)
