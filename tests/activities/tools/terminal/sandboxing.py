"""What the sandbox tests share: whether bwrap works here, and a terminal with something to protect."""

from __future__ import annotations

import contextlib
import hashlib
import os
import socket
from dataclasses import dataclass
from pathlib import Path

import pytest

from activities.tools.terminal.confinement import Confinement
from activities.tools.terminal.sandbox import Sandbox
from activities.tools.terminal.tool import TerminalTool
from contracts import SandboxProfile, ToolCallRequest, ToolResult, ToolRun
from core.settings import Settings, ToolSettings

_, _WHY = Sandbox.find("bwrap", [Path.cwd()], Path.cwd())
needs_bwrap = pytest.mark.skipif(
    bool(_WHY),
    reason=f"the terminal sandbox cannot run here: {_WHY}; .ci/run installs it",
)
"""Marks a test that needs a working bubblewrap; it is skipped, with the reason, where there is none."""

_CONFINEMENT = Confinement.find(60001)[0]
_GAPS = "; ".join(_CONFINEMENT.gaps if _CONFINEMENT is not None else ["no confinement"])
LANDLOCK = _CONFINEMENT is not None and bool(_CONFINEMENT.landlock)
"""Whether this kernel's sandboxes keep FIFOs closed (Landlock)."""
SECCOMP = _CONFINEMENT is not None and _CONFINEMENT.seccomp is not None
"""Whether this kernel's sandboxes refuse Unix sockets (a seccomp filter)."""
needs_landlock = pytest.mark.skipif(
    not LANDLOCK, reason=f"the sandbox cannot keep FIFOs closed here: {_GAPS}"
)
"""Marks a test of what Landlock refuses (a FIFO's writes): skipped, with the reason, without it."""
needs_seccomp = pytest.mark.skipif(
    not SECCOMP, reason=f"the sandbox cannot refuse Unix sockets here: {_GAPS}"
)
"""Marks a test of what the seccomp filter refuses (Unix sockets): skipped, with the reason, without it."""

SECRET = "synapse-canary-7f3e9a1c"
"""Planted outside the trusted folder, in the worker's environment and in the worker's data dir."""


OWNER = "session:t"
"""The workflow the tests' commands run for."""


def call(command: str) -> ToolCallRequest:
    """A terminal call."""
    return ToolCallRequest(tool_id="terminal", arguments={"command": command})


def tool_run(
    command: str, interaction_id: str | None = None, sandbox: SandboxProfile | None = None
) -> ToolRun:
    """A run of `command` for `OWNER`: approved by `interaction_id` for `sandbox` (None: the
    worker's default), or without an approval."""
    return ToolRun(owner_id=OWNER, interaction_id=interaction_id, call=call(command), sandbox=sandbox)


def snapshot(*roots: Path, skip: Path | None = None) -> dict[str, str]:
    """Every file under `roots` but `skip` (symlinks as their targets) and a hash of its content."""
    seen: dict[str, str] = {}
    for root in roots:
        for folder, dirs, files in os.walk(root):
            if skip is not None:
                dirs[:] = [name for name in dirs if Path(folder) / name != skip]
            for name in [*dirs, *files]:
                path = Path(folder) / name
                if path.is_symlink():
                    seen[str(path)] = f"-> {os.readlink(path)}"
                elif path.is_file():
                    seen[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
                else:
                    seen[str(path)] = "dir"
    return seen


@dataclass
class Planted:
    """A FIFO and a listening Unix socket a host process serves (this test, their only reader), root's
    and writable by anyone: what a sandboxed command must not write into or connect to."""

    fifo: Path
    unix: Path
    """The socket's path."""
    reader: int
    listener: socket.socket

    @classmethod
    def at(cls, folder: Path, name: str = "pipe") -> Planted:
        """`name` (the FIFO) and `name.sock` in `folder`."""
        fifo, path = folder / name, folder / f"{name}.sock"
        os.mkfifo(fifo)
        fifo.chmod(0o666)
        reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # a writer's open does not wait
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        at = os.open(folder, os.O_PATH)
        try:  # through the folder's descriptor: a socket's path may hold 107 bytes at most
            listener.bind(f"/proc/self/fd/{at}/{path.name}")
        finally:
            os.close(at)
        path.chmod(0o777)
        listener.listen(16)
        listener.setblocking(False)
        return cls(fifo, path, reader, listener)

    def heard(self) -> list[str]:
        """What reached them since the last look: bytes written into the FIFO, connections made (a
        command that ended has written or connected already: nothing to wait for)."""
        heard: list[str] = []
        with contextlib.suppress(BlockingIOError):
            if data := os.read(self.reader, 65536):
                heard.append(f"{self.fifo} got {data!r}")
        with contextlib.suppress(BlockingIOError):
            self.listener.accept()[0].close()
            heard.append(f"{self.unix} was connected to")
        return heard

    def close(self) -> None:
        os.close(self.reader)
        self.listener.close()
        self.fifo.unlink(missing_ok=True)
        self.unix.unlink(missing_ok=True)


@dataclass
class Bench:
    """A worker's terminal tool with a trusted folder (`work`), a secret outside it (`outside`),
    symlinks leading out, and the worker's data dir holding a secret too."""

    tool: TerminalTool
    root: Path
    work: Path
    outside: Path
    data: Path

    async def free(self, command: str) -> ToolResult | None:
        """Run `command` as an agent would without approval: None when it is asked for instead."""
        needs_approval, _ = self.tool.assess(call(command), {})
        if needs_approval:
            return None
        return await self.tool.run(tool_run(command))

    async def approved(self, command: str, profile: SandboxProfile | None, interaction_id: str) -> ToolResult:
        """Run `command` as approved by `interaction_id` under `profile` (None: the worker's default)."""
        return await self.tool.run(tool_run(command, interaction_id, profile))

    def untouched(self) -> dict[str, str]:
        """What a harmless command leaves as it found it: the trusted folder, the folder outside, and
        the secret in the worker's data dir (where the worker itself keeps writing its own files)."""
        planted = self.data / "worker-secret.txt"
        return {**snapshot(self.work, self.outside, skip=self.data), str(planted): planted.read_text()}

    async def close(self) -> None:
        await self.tool.runner.terminals.close()


def bench(
    root: Path,
    monkeypatch: pytest.MonkeyPatch,
    *,
    allow: str | None = None,
    data_in_work: bool = False,
    data: Path | None = None,
    env_file: bool = True,
    **tools: object,
) -> Bench:
    """Lay out `root` and configure a terminal tool on it (the secret in the worker's environment).

    `data_in_work`: the worker's data dir is `.synapse` in the trusted folder, and the worker runs
    there, with a `.env` holding a secret unless `env_file` is false (as `make up` does). `data`:
    the data dir's path under `root` instead."""
    work, outside = root / "work", root / "outside"
    data = root / data if data is not None else work / ".synapse" if data_in_work else root / "data"
    for folder in (work / "sub", outside, data):
        folder.mkdir(parents=True)
    (work / "README.md").write_text("# Hello\nThis folder is trusted.\n")
    (work / "notes.txt").write_text("x marks the spot\nno x here? yes x\n")
    (work / "victim.txt").write_text("must survive\n")
    (work / "sub" / "deep.txt").write_text("deep\n")
    (outside / "secret.txt").write_text(f"{SECRET}\n")
    (data / "worker-secret.txt").write_text(f"{SECRET}\n")
    (work / "link_to_secret").symlink_to(outside / "secret.txt")
    (work / "link_to_outside").symlink_to(outside)
    (work / "link_to_data").symlink_to(data)
    (work / "link_to_outside_secret").symlink_to(outside / "secret.txt")
    if data_in_work:
        if env_file:
            (work / ".env").write_text(f"LARK_APP_SECRET={SECRET}\n")
        monkeypatch.chdir(work)
    monkeypatch.setenv("SYNAPSE_CANARY", SECRET)
    settings = Settings(
        data_dir=data,
        tools=ToolSettings.model_validate(
            {
                "terminal_cwd": work,
                "terminal_idle_seconds": 5,
                "terminal_timeout_seconds": 15,
                **({"terminal_allow": allow} if allow is not None else {}),
                **tools,
            }
        ),
        _env_file=None,
    )
    tool = TerminalTool.from_settings(settings)
    tool.prepare()
    return Bench(tool, root, work, outside, data)
