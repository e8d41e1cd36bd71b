"""Bubblewrap sandboxes for terminal commands: what a command may see, write and reach.

Two kinds of command, each started by one line typed into the session's shell:
- `free_line`: a command that runs without approval. It sees the system directories programs need
  and the trusted folders, all read-only, and nothing else: no home, no `/etc` beyond the dynamic
  linker's files (and a passwd naming the worker alone), no other process, no network, no
  environment but PATH, LANG, TERM and SHELL, no input.
- `approved_line`: an approved command under a `SandboxProfile`. `read-only` and `workspace-write`
  show the whole file system read-only except the worker's home and own files (covered) and `/run`
  (the host's sockets); `workspace-write` may write the workspace, and reach the network only when
  the operator shares the host's (its loopback holds Synapse's own API and Temporal). The shell's
  exported environment goes in; the folder and exports it leaves come back through `carry`.

Nothing the agent wrote is ever typed: the command's words (or its text) and bwrap's arguments are
written to the terminal's scratch folder and read by bwrap (`--args`) and by a fixed script inside
the sandbox, so no character of them can act on the shell's line editor or the terminal. A
sandboxed command holds no part of the session's terminal either: no input, a terminal of its own
(util-linux `script`), its output relayed by `cat` outside (`RELAY`). bwrap is started by its
absolute path with an empty environment (`exec -c`), so nothing the session's shell holds (PATH,
LD_PRELOAD) reaches bwrap, which runs outside the sandbox. Capabilities are dropped (as root, bwrap
otherwise keeps them inside, enough to remount a read-only folder writable). `--new-session` leaves
no controlling terminal inside. A new PID namespace hides every other process and ends the
command's background processes with it. Under `workspace-write` the folders between the workspace
and a covered file or Synapse's own installation are mounted on themselves, so no command can rename
them away, and a covered file that does not exist yet is made an empty read-only placeholder, so no
command can create it (the worker's `.env` would be read at its next start).

Every sandboxed command runs as a uid that is not root (`confinement`: `SYNAPSE_TERMINAL_SANDBOX_UID`
under a root worker, else the worker's own), cannot write /proc's knobs (`/proc/sys`, SysRq: read-
only), cannot create a Unix socket (seccomp) and cannot open for writing anything outside `/dev`
and what its profile writes (Landlock: FIFOs and devices, which read-only mounts let through). The
folders bwrap makes on the way to a mount are opened to that uid (`--perms 0755 --dir`), and a root
worker gives it the workspace by ACL entries (`acl`, `share_workspace`).
"""

from __future__ import annotations

import os
import shlex
import shutil
import stat
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from contracts import SandboxProfile

from . import acl
from .confinement import SECCOMP_FD, Confinement
from .inside import (
    ARGS_FD,
    BASH,
    ENV_FD,
    OVERLAY_FD,
    RELAY,
    RUN_COMMAND,
    RUN_WORDS,
    SIZE,
    STATE_FD,
    STATUS_FD,
    WORDS_FD,
)
from .layout import OPEN_FOLDER, TMPS, layered
from .scratch import Scratch

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
SOCKETS = ("/run", "/var/run")
"""Where the host's services listen (a Docker or D-Bus socket): empty in every approved sandbox."""
PROC_KNOBS = ("/proc/sys", "/proc/sysrq-trigger", "/proc/fs", "/proc/irq", "/proc/bus")
"""What of a sandbox's /proc could change the host (sysctls, SysRq): read-only in every sandbox."""
COMMON = ("--die-with-parent", "--new-session")
GIT_ANY_OWNER = (
    *("--setenv", "GIT_CONFIG_COUNT", "1"),
    *("--setenv", "GIT_CONFIG_KEY_0", "safe.directory", "--setenv", "GIT_CONFIG_VALUE_0", "*"),
)
"""An approved command runs as a uid that owns no repository: git would refuse every one ("dubious
ownership"), a check that protects a user from another's repository config, which inside the
sandbox runs no wider than the approved command itself. (Exports of the session's shell win.)"""
DEFAULT_UID = 60001
"""The uid a root worker's sandboxed commands run as unless configured (`SYNAPSE_TERMINAL_SANDBOX_UID`)."""
PROBE_TIMEOUT = 10.0
SECRET_FILES = ("/etc/shadow", "/etc/gshadow", "/etc/sudoers")
"""The system's secrets: covered in every approved sandbox (a free one shows none of /etc)."""
HOME_SECRETS = (
    ".ssh",
    ".aws",
    ".azure",
    ".gnupg",
    ".kube",
    ".docker",
    ".config/gcloud",
    ".config/temporalio",
)
"""Folders in the worker's home holding its credentials (its Temporal profile among them): covered."""
HOME_SECRET_FILES = (".netrc", ".pgpass", ".git-credentials")


def _within(path: Path, folders: Iterable[Path]) -> bool:
    return any(path == folder or folder in path.parents for folder in folders)


def _quoted(path: Path) -> str:
    return shlex.quote(str(path))


@dataclass(frozen=True)
class Sandbox:
    """Sandboxes made by one bwrap program for one configuration of folders."""

    bwrap: str
    """Absolute path of the bwrap program (never looked up in a session's PATH)."""
    trusted: tuple[Path, ...]
    """Folders free commands may read."""
    workspace: Path
    """The folder `workspace-write` commands may write."""
    hidden_dirs: tuple[Path, ...] = ()
    """The worker's own folders (its data dir) that no sandbox shows."""
    hidden_files: tuple[Path, ...] = ()
    """The worker's own files (`.env`, the agents file) that no sandbox shows or lets be created."""
    protected: tuple[Path, ...] = ()
    """Synapse's own installation (its code, its virtualenv): read-only even inside the workspace,
    or a workspace-write command could change what the worker runs at its next start."""
    home: Path | None = None
    """The worker's home: covered in approved sandboxes (it holds its credentials, whatever tools
    wrote them), but for the folders shown again (trusted, workspace, installation)."""
    host_network: bool = False
    """`workspace-write` shares the host's network (and with it every service on the host's
    loopback: Synapse's API and Temporal among them); else no sandbox has a network."""
    script: str | None = None
    """util-linux `script`, which gives a sandboxed command a terminal of its own."""
    confinement: Confinement = field(kw_only=True)
    """Who its commands run as (never root), and what the kernel refuses them (`confinement`)."""

    @classmethod
    def find(
        cls,
        program: str,
        trusted: Iterable[Path],
        workspace: Path,
        hidden_dirs: Iterable[Path] = (),
        hidden_files: Iterable[Path] = (),
        protected: Iterable[Path] = (),
        home: Path | None = None,
        host_network: bool = False,
        uid: int = DEFAULT_UID,
    ) -> tuple[Sandbox | None, str]:
        """The sandbox when `program` (bwrap) is there, safe to trust, and can start one; else None and
        why. Its commands run as `uid` when the worker is root, else as the worker's own uid."""
        found = shutil.which(program)
        if found is None:
            return None, f"{program!r} was not found (install the Debian package bubblewrap)"
        confinement, refused = Confinement.find(uid)
        if confinement is None:
            return None, refused
        sandbox = cls(
            bwrap=str(Path(found).resolve()),
            trusted=tuple(Path(folder).resolve() for folder in trusted),
            workspace=workspace.resolve(),
            hidden_dirs=tuple(Path(path).resolve() for path in hidden_dirs),
            hidden_files=tuple(Path(path).resolve() for path in hidden_files),
            protected=tuple(Path(path).resolve() for path in protected),
            home=home.resolve() if home is not None else None,
            host_network=host_network,
            script=shutil.which("script", path="/usr/bin:/bin"),
            confinement=confinement,
        )
        why = sandbox.untrusted() or sandbox.probe()
        return (None, why) if why else (sandbox, "")

    def untrusted(self) -> str | None:
        """Why the bwrap program (or what runs before the command inside, `setpriv` and Perl)
        cannot be trusted (None: they can): a program a sandboxed command could replace would run
        every later command without a sandbox."""
        for program in (self.bwrap, *self.confinement.programs):
            info = os.stat(program)
            if info.st_uid != 0 or info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
                return f"{program} must be owned by root and writable by root alone"
            if _within(Path(program).resolve(), [*self.trusted, self.workspace]):
                return f"{program} lies in a folder sandboxed commands may read or write"
        return None

    def probe(self) -> str | None:
        """Start a free and a read-only sandbox around `true`; None when both work, else why not.
        (A workspace-write one would leave its placeholders: they wait for the first such command.)"""
        checks = {
            "free": self._free_arguments(None),
            "read-only": self._approved_arguments(SandboxProfile.READ_ONLY),
        }
        for kind, arguments in checks.items():
            try:
                done = self.start(arguments, ["/bin/true"])
            except (OSError, subprocess.TimeoutExpired) as err:
                return f"{self.bwrap} could not start a {kind} sandbox: {err}"
            if done.returncode != 0:
                said = done.stderr.strip() or f"exit status {done.returncode}"
                return f"{self.bwrap} could not start a {kind} sandbox: {said}"
        return None

    def start(self, arguments: list[str], command: list[str]) -> subprocess.CompletedProcess[str]:
        """Run `command` in the sandbox `arguments` make, as a typed line would but for the terminal
        (the seccomp filter on its descriptor, bwrap's status to nowhere), and wait for it."""
        fds = f'exec "$@" {SECCOMP_FD}<&0 {STATUS_FD}>/dev/null </dev/null'
        read, write = os.pipe()
        try:
            os.write(write, self.confinement.seccomp or b"")
            os.close(write)
            return subprocess.run(
                [
                    BASH,
                    "--noprofile",
                    "--norc",
                    "-c",
                    fds,
                    "start",
                    self.bwrap,
                    *arguments,
                    "--",
                    *self.confinement.runner(),
                    *command,
                ],
                stdin=read,
                capture_output=True,
                text=True,
                timeout=PROBE_TIMEOUT,
                check=False,
                env={},
            )
        finally:
            os.close(read)

    def free_line(self, words: list[str], scratch: Scratch) -> str:
        """The line that runs `words` (an allowlisted program and its arguments) without approval."""
        scratch.identify(self.confinement.uid, self.confinement.gid)
        scratch.words.write_bytes(b"".join(word.encode() + b"\0" for word in words))
        return self._line(self._free_arguments(scratch), RUN_WORDS, scratch, "", own_terminal=False)

    @property
    def writable(self) -> bool:
        """Whether `workspace-write` commands may write the workspace: not when it lies in Synapse's
        own installation (`make up` in its checkout: point the terminal at a project of its own),
        unless it lies in the worker's own data there (`.synapse/workspace`, `synapse up`'s default),
        a covered folder that holds none of the installation."""
        if not _within(self.workspace, self.protected):
            return True
        return any(
            _within(self.workspace, [folder]) and not any(_within(path, [folder]) for path in self.protected)
            for folder in self.hidden_dirs
        )

    def share_workspace(self) -> acl.Granted | None:
        """Let the sandbox's user write the workspace (`acl`), when it is not the worker's own uid
        and `workspace-write` may write there; None when there is nothing to do."""
        if self.confinement.uid == os.getuid() or not self.writable:
            return None
        skip = [*self.hidden_dirs, *self.hidden_files, *self.protected]
        return acl.grant(self.workspace, self.confinement.uid, skip)

    def approved_line(self, profile: SandboxProfile, command: str, scratch: Scratch, overlay: str) -> str:
        """The line that runs an approved `command` (any shell syntax) under `profile`, starting
        with the exports of earlier sandboxed commands (`overlay`, a script)."""
        scratch.words.write_text(command)
        scratch.overlay.write_text(overlay)
        extra = f"{OVERLAY_FD}<{_quoted(scratch.overlay)} {ENV_FD}< <(export -p) {STATE_FD}>{_quoted(scratch.state)}"
        return self._line(self._approved_arguments(profile), RUN_COMMAND, scratch, extra, own_terminal=True)

    def _line(
        self, arguments: list[str], script: str, scratch: Scratch, extra: str, own_terminal: bool
    ) -> str:
        """bwrap with `arguments` (through a file) around bash running `script` (a constant), its
        output relayed (`RELAY`). `own_terminal`: on a terminal of the sandbox's own (util-linux
        `script`, when there is one), so programs still see a terminal (colours, lines as they
        come), for about 20 ms more; else their output is a pipe."""
        if not scratch.folder.is_absolute():  # the shell would look for it from wherever it is
            raise ValueError(f"a terminal's scratch folder must be an absolute path, not {scratch.folder}")
        scratch.args.write_bytes(
            b"".join(word.encode() + b"\0" for word in [*arguments, "--setenv", "SHELL", BASH])
        )
        if own_terminal and self.script is not None:
            runner = [self.script, "--quiet", "--return", "--flush", "--command", SIZE + script, "/dev/null"]
        else:
            runner = [BASH, "--noprofile", "--norc", "-c", script, "synapse"]
        inner = " ".join(shlex.quote(word) for word in [*self.confinement.runner(), *runner])
        if self.confinement.seccomp is not None:
            if not scratch.seccomp.exists():
                scratch.seccomp.write_bytes(self.confinement.seccomp)
            extra = f"{SECCOMP_FD}<{_quoted(scratch.seccomp)} {extra}"
        return (
            f'( exec -c {shlex.quote(self.bwrap)} --args {ARGS_FD} --chdir "$PWD" -- {inner} ) </dev/null '
            f"{WORDS_FD}<{_quoted(scratch.words)} {ARGS_FD}<{_quoted(scratch.args)} "
            f"{STATUS_FD}>{_quoted(scratch.status)} {extra} {RELAY}"
        )

    def _system(self) -> list[str]:
        mounts: list[str] = []
        for name in SYSTEM_DIRS:
            path = Path(name)
            if path.is_symlink():
                mounts += ["--symlink", os.readlink(path), name]
            elif path.is_dir():
                mounts += ["--ro-bind", name, name]
        mounts += [*OPEN_FOLDER, "/etc"]
        for name in SYSTEM_FILES:
            mounts += ["--ro-bind-try", name, name]
        return mounts

    def _covers(self, shown: list[Path], writable: Path | None) -> list[tuple[Path, list[str]]]:
        """Mounts that cover the worker's own files where a sandbox shows them (an empty folder, an
        empty file); where `writable` may be written, a missing one too, as an empty placeholder."""
        covers: list[tuple[Path, list[str]]] = []
        seen = [*shown, *([writable] if writable else [])]

        def relevant(path: Path, exists: bool) -> bool:
            if exists:
                return _within(path, seen) or any(_within(folder, [path]) for folder in shown)
            return writable is not None and _within(path, [writable]) and path != writable

        for path in self.hidden_dirs:
            if relevant(path, path.is_dir()):
                covers.append((path, ["--tmpfs", str(path)]))
        for path in self.hidden_files:
            if relevant(path, path.exists()):
                covers.append((path, ["--ro-bind", "/dev/null", str(path)]))
        return covers

    def _anchors(self, writable: Path) -> list[tuple[Path, list[str]]]:
        """The folders between `writable` and a covered or protected path, mounted on themselves: a
        mount point cannot be renamed, so no command can move a cover or the installation away."""
        anchors: dict[Path, list[str]] = {}
        for path in (*self.hidden_dirs, *self.hidden_files, *self.protected):
            if _within(path, [writable]) and path != writable:
                for folder in path.parents:
                    if folder == writable:
                        break
                    anchors[folder] = ["--bind-try", str(folder), str(folder)]
        return list(anchors.items())

    def _proc(self) -> list[str]:
        """A /proc of the sandbox's own, its knobs read-only (they reach the host's kernel)."""
        return ["--proc", "/proc", *(word for knob in PROC_KNOBS for word in ("--ro-bind-try", knob, knob))]

    def _free_arguments(self, scratch: Scratch | None) -> list[str]:
        identity = (
            ["--ro-bind", str(scratch.passwd), "/etc/passwd", "--ro-bind", str(scratch.group), "/etc/group"]
            if scratch is not None
            else []
        )
        binds = [(folder, ["--ro-bind", str(folder), str(folder)]) for folder in self.trusted]
        mounts = layered(binds, self._covers(list(self.trusted), None))
        setenv = [word for name, value in FREE_ENV.items() for word in ("--setenv", name, value)]
        return [
            *COMMON,
            *self.confinement.namespaces(share_net=False),
            *self._system(),
            *identity,
            *mounts,
            *self._proc(),
            "--dev",
            "/dev",
            "--clearenv",
            *setenv,
            *self.confinement.arguments([]),
            "--json-status-fd",
            str(STATUS_FD),
        ]

    def tmps(self, profile: SandboxProfile) -> list[Path]:
        """The sandbox's own tmp folders its commands may write (Landlock): not one that holds a
        folder it shows read-only (a trusted folder in /tmp), whose FIFOs would be writable too."""
        writable = [self.workspace] if profile == SandboxProfile.WORKSPACE_WRITE and self.writable else []
        shown = [
            path for path in (*self.trusted, self.workspace, *self.protected) if not _within(path, writable)
        ]
        return [tmp for tmp in TMPS if tmp.is_dir() and not any(_within(path, [tmp]) for path in shown)]

    def unwritable_tmps(self, profile: SandboxProfile) -> list[Path]:
        """The sandbox's own tmp folders that its commands under `profile` cannot write (`tmps`)."""
        writable = self.tmps(profile)
        return [tmp for tmp in TMPS if tmp.is_dir() and tmp not in writable]

    def _approved_arguments(self, profile: SandboxProfile) -> list[str]:
        """All of `/` read-only but the worker's own files and the host's sockets, a /tmp, /var/tmp
        and /dev/shm of its own, the trusted folders and the workspace shown again where a cover hid
        them, and the workspace writable (with the folders that keep covers in place) under
        `workspace-write`."""
        writable = self.workspace if profile == SandboxProfile.WORKSPACE_WRITE and self.writable else None
        binds = [(folder, ["--ro-bind", str(folder), str(folder)]) for folder in self.trusted]
        binds.append(
            (
                self.workspace,
                ["--bind" if writable else "--ro-bind", str(self.workspace), str(self.workspace)],
            )
        )
        binds += [(path, ["--ro-bind", str(path), str(path)]) for path in self.protected if path.exists()]
        if writable is not None:
            binds += self._anchors(writable)
        sockets = [Path(path) for path in SOCKETS if Path(path).is_dir() and not Path(path).is_symlink()]
        home = (
            [(self.home, ["--tmpfs", str(self.home)])] if self.home is not None and self.home.is_dir() else []
        )
        tmps = [tmp for tmp in TMPS if tmp.is_dir() and not tmp.is_symlink()]
        covers = [
            *((tmp, ["--perms", "1777", "--tmpfs", str(tmp)]) for tmp in tmps),
            *home,
            *((path, ["--tmpfs", str(path)]) for path in sockets),
            *self._covers([Path("/")], writable),
        ]
        landlocked = [*([writable] if writable is not None else []), *self.tmps(profile)]
        return [
            *COMMON,
            *self.confinement.namespaces(share_net=writable is not None and self.host_network),
            "--ro-bind",
            "/",
            "/",
            *layered(binds, covers),
            *self._proc(),
            "--dev",
            "/dev",
            "--perms",
            "1777",
            "--tmpfs",
            "/dev/shm",
            *self.confinement.arguments(landlocked),
            *(GIT_ANY_OWNER if self.confinement.uid != os.getuid() else ()),
            "--json-status-fd",
            str(STATUS_FD),
        ]
