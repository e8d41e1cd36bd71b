"""Bubblewrap sandboxes for terminal commands: what a command may see, write and reach.

Two kinds of command line, typed into the session's shell like any command:
- `free_line`: a command that runs without approval. It sees the system directories programs need
  and the trusted folders, all read-only, and nothing else: no home, no `/etc` beyond the dynamic
  linker's files, no other process, no network, no environment but PATH, LANG and TERM, no input.
- `approved_line`: an approved command under a `SandboxProfile`. `read-only` and `workspace-write`
  show the whole file system read-only except the worker's own data (hidden); `workspace-write`
  may write the workspace and reach the network. The shell's exported environment goes in; the
  folder and exports it leaves come back through `carry`, so a session's `cd` and `export` persist.

Both start bwrap by its absolute path with an empty environment (`exec -c`), so nothing the session's
shell holds (PATH, LD_PRELOAD) reaches bwrap itself, which runs outside the sandbox. Capabilities
are dropped: as root, bwrap otherwise keeps them inside, enough to remount a read-only folder
writable. `--new-session` leaves no controlling terminal inside, so a sandboxed program cannot type
into the session's shell (TIOCSTI). A new PID namespace hides every other process (and its
`/proc/<pid>/environ`) and ends the command's background processes with it.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from contracts import SandboxProfile

SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
"""Where programs and their libraries are: read-only in every sandbox (a symlink stays a symlink)."""
SYSTEM_FILES = (
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/alternatives",
    "/etc/localtime",
    "/etc/terminfo",
    "/etc/magic",
    "/etc/magic.mime",
)
"""What of `/etc` a program needs to start and print (the linker's cache, Debian's alternatives)."""
FREE_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "TERM": "xterm-256color"}
"""The whole environment of a command that runs without approval."""
STATUS_FD, ENV_FD, STATE_FD = 7, 8, 9
"""File descriptors of bwrap's JSON status, the shell's exports (in) and the carried state (out)."""
TMP = Path("/tmp")
COMMON = ("--unshare-all", "--cap-drop", "ALL", "--die-with-parent", "--new-session")
PROBE_TIMEOUT = 10.0

INNER = (
    f"source /dev/fd/{ENV_FD}; exec {ENV_FD}<&-\n"
    "__synapse_env() { local n IFS=$' \\t\\n'; "
    'for n in $(compgen -e); do printf \'%s=%s\\0\' "$n" "${!n}"; done; }\n'
    f"{{ __synapse_env; printf '\\0'; }} >&{STATE_FD}\n"
    f'trap \'__synapse_s=$?; {{ printf "%s\\0" "$PWD"; __synapse_env; }} >&{STATE_FD}; exit $__synapse_s\' EXIT\n'
    'eval "$1"\n'
)
"""The script of an approved command's inner bash: take the shell's exports, write them (before),
run the command, and on exit write the folder and exports it leaves (after), NUL-separated."""


def _join(words: Iterable[str | Path]) -> str:
    return " ".join(shlex.quote(str(word)) for word in words)


def _within(path: Path, folders: Iterable[Path]) -> bool:
    return any(path == folder or folder in path.parents for folder in folders)


@dataclass(frozen=True)
class Scratch:
    """A terminal's private files outside every sandbox: bwrap's status and the carried state."""

    folder: Path

    @property
    def status(self) -> Path:
        """bwrap's JSON status (`--json-status-fd`): an `exit-code` once the command ran."""
        return self.folder / "status.json"

    @property
    def state(self) -> Path:
        """What an approved sandboxed command leaves: exports before, then folder and exports after."""
        return self.folder / "state"

    def started(self) -> bool:
        """Whether the last sandboxed command got past the sandbox's set-up and ran to its end."""
        try:
            return '"exit-code"' in self.status.read_text()
        except OSError:
            return False


@dataclass(frozen=True)
class Sandbox:
    """Sandboxes made by one bwrap program for one configuration of folders."""

    bwrap: str
    """Absolute path of the bwrap program (never looked up in a session's PATH)."""
    trusted: tuple[Path, ...]
    """Folders free commands may read."""
    workspace: Path
    """The folder `workspace-write` commands may write."""
    hidden: tuple[Path, ...] = ()
    """The worker's own files and folders (data dir, `.env`) that no sandbox shows."""

    @classmethod
    def find(
        cls, program: str, trusted: Iterable[Path], workspace: Path, hidden: Iterable[Path] = ()
    ) -> tuple[Sandbox | None, str]:
        """The sandbox when `program` (bwrap) is there and can start one; else None and why not."""
        found = shutil.which(program)
        if found is None:
            return None, f"{program!r} was not found (install the Debian package bubblewrap)"
        sandbox = cls(
            bwrap=str(Path(found).resolve()),
            trusted=tuple(Path(folder).resolve() for folder in trusted),
            workspace=workspace.resolve(),
            hidden=tuple(Path(path).resolve() for path in hidden),
        )
        why = sandbox.probe()
        return (None, why) if why else (sandbox, "")

    def probe(self) -> str | None:
        """Start one sandbox of each kind around `true`; None when both work, else why not."""
        checks = {
            "free": [*self._free_mounts(), "--", "/bin/true"],
            "workspace-write": [*self._approved_mounts(SandboxProfile.WORKSPACE_WRITE), "--", "/bin/true"],
        }
        for kind, arguments in checks.items():
            try:
                done = subprocess.run(
                    [self.bwrap, *COMMON, *arguments],
                    capture_output=True,
                    text=True,
                    timeout=PROBE_TIMEOUT,
                    check=False,
                    env={},
                )
            except (OSError, subprocess.TimeoutExpired) as err:
                return f"{self.bwrap} could not start a {kind} sandbox: {err}"
            if done.returncode != 0:
                said = done.stderr.strip() or f"exit status {done.returncode}"
                return f"{self.bwrap} could not start a {kind} sandbox: {said}"
        return None

    def free_line(self, argv: list[str], scratch: Scratch) -> str:
        """The line that runs `argv` (an allowlisted program and its words) without approval."""
        setenv = [word for name, value in FREE_ENV.items() for word in ("--setenv", name, value)]
        bwrap = _join([self.bwrap, *COMMON, *self._free_mounts(), "--clearenv", *setenv])
        return (
            f'( exec -c {bwrap} --json-status-fd {STATUS_FD} --chdir "$PWD" -- {_join(argv)} ) '
            f"</dev/null {STATUS_FD}>{shlex.quote(str(scratch.status))}"
        )

    def approved_line(self, profile: SandboxProfile, command: str, scratch: Scratch) -> str:
        """The line that runs an approved `command` (any shell syntax) under `profile`."""
        bwrap = _join([self.bwrap, *COMMON, *self._approved_mounts(profile)])
        inner = _join(["/bin/bash", "--noprofile", "--norc", "-c", INNER, "synapse", command])
        return (
            f'( exec -c {bwrap} --json-status-fd {STATUS_FD} --chdir "$PWD" -- {inner} ) '
            f"{STATUS_FD}>{shlex.quote(str(scratch.status))} {ENV_FD}< <(export -p) "
            f"{STATE_FD}>{shlex.quote(str(scratch.state))}"
        )

    def _system(self) -> list[str]:
        mounts: list[str] = []
        for name in SYSTEM_DIRS:
            path = Path(name)
            if path.is_symlink():
                mounts += ["--symlink", os.readlink(path), name]
            elif path.is_dir():
                mounts += ["--ro-bind", name, name]
        for name in SYSTEM_FILES:
            mounts += ["--ro-bind-try", name, name]
        return mounts

    def _covers(self, shown: Iterable[Path]) -> list[tuple[Path, list[str]]]:
        """Mounts that cover the worker's own files (an empty folder, an empty file) where a sandbox
        showing `shown` would show them."""
        shown = list(shown)
        covers: list[tuple[Path, list[str]]] = []
        for path in self.hidden:
            if not (_within(path, shown) or any(_within(folder, [path]) for folder in shown)):
                continue
            if path.is_dir():  # read-only once everything is mounted (a folder shown inside it, too)
                covers.append((path, ["--tmpfs", str(path)]))
            elif path.exists():
                covers.append((path, ["--ro-bind", "/dev/null", str(path)]))
        return covers

    def _free_mounts(self) -> list[str]:
        binds = [(folder, ["--ro-bind", str(folder), str(folder)]) for folder in self.trusted]
        layered = _layered(binds, self._covers(self.trusted))
        return [*self._system(), *layered, "--proc", "/proc", "--dev", "/dev"]

    def _approved_mounts(self, profile: SandboxProfile) -> list[str]:
        """All of `/` read-only but the worker's own files, a /tmp of its own, the trusted folders and
        the workspace shown again where a cover hid them, and the workspace writable under
        `workspace-write`."""
        writable = profile == SandboxProfile.WORKSPACE_WRITE
        binds = [(folder, ["--ro-bind", str(folder), str(folder)]) for folder in self.trusted]
        binds.append(
            (
                self.workspace,
                ["--bind" if writable else "--ro-bind", str(self.workspace), str(self.workspace)],
            )
        )
        covers = [(TMP, ["--tmpfs", str(TMP)]), *self._covers([Path("/")])]
        network = ["--share-net"] if writable else []
        return ["--ro-bind", "/", "/", *_layered(binds, covers), *network, "--proc", "/proc", "--dev", "/dev"]


def _layered(binds: list[tuple[Path, list[str]]], covers: list[tuple[Path, list[str]]]) -> list[str]:
    """Mounts in an order where each lands on what it should: outer paths first, so a folder shown
    inside a covered one (the workspace under /tmp) is mounted over the cover, and a cover inside a
    shown folder (the data dir in the workspace) over the folder; a cover wins over a bind of the
    same path."""
    ordered = sorted(
        [(len(path.parts), 0, path, words) for path, words in binds]
        + [(len(path.parts), 1, path, words) for path, words in covers],
        key=lambda entry: (entry[0], entry[1], str(entry[2])),
    )
    sealed = [
        word
        for path, words in covers
        if words[0] == "--tmpfs" and path != TMP
        for word in ("--remount-ro", str(path))
    ]
    return [*(word for *_, words in ordered for word in words), *sealed]
