"""What a sandboxed command reaches besides files: FIFOs, Unix sockets, /proc's knobs, its own uid.

Read-only mounts stop writes to files, not writes into a FIFO nor a `connect()` to a Unix socket (the
kernel's read-only check skips both), nor a sysctl write by a command that is the host's root. Each
probe runs under `read-only` and `workspace-write` (the free sandbox's are in the escape table),
against a FIFO and a listening socket that are root's, writable by anyone and served by the test, in
the trusted folder, in the workspace and outside both (in Synapse's checkout, which approved
sandboxes show read-only). A kernel setting is only ever written with the value it already has.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import sys
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from activities.tools.terminal.policy import SOURCE_ROOT
from contracts import SandboxProfile, ToolResult

from ....conftest import assert_eventually
from .sandboxing import Bench, Planted, bench, needs_bwrap, needs_landlock, needs_seccomp

pytestmark = needs_bwrap

SANDBOXED = [SandboxProfile.READ_ONLY, SandboxProfile.WORKSPACE_WRITE]
LEASE = Path("/proc/sys/fs/lease-break-time")
SYSRQ = Path("/proc/sysrq-trigger")
SANDBOX_UID = 60001
"""`SYNAPSE_TERMINAL_SANDBOX_UID`'s default: a root worker's commands run as it."""
UID, GID = (SANDBOX_UID, SANDBOX_UID) if os.getuid() == 0 else (os.getuid(), os.getgid())
"""Who every sandboxed command runs as on this machine (a worker that is not root: itself)."""


@dataclass
class Reach:
    """A terminal whose workspace (`ws`) is not its trusted folder (`at.work`), and what is planted."""

    at: Bench
    ws: Path
    planted: dict[str, Planted]


@pytest.fixture
async def reach(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Reach]:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "existing.txt").write_text("the worker's\n")
    at = bench(tmp_path, monkeypatch, terminal_workspace=ws)
    outside = SOURCE_ROOT / f".reach-{uuid.uuid4().hex[:8]}"
    outside.mkdir()
    planted = {"trusted": Planted.at(at.work), "workspace": Planted.at(ws), "outside": Planted.at(outside)}
    yield Reach(at, ws, planted)
    for each in planted.values():
        each.close()
    shutil.rmtree(outside, ignore_errors=True)
    await at.close()


def _connect(path: Path) -> str:
    return (
        f"{sys.executable} -c 'import socket, sys; socket.socket(socket.AF_UNIX).connect(sys.argv[1])' {path}"
    )


@needs_landlock
@pytest.mark.parametrize("where", ["trusted", "workspace", "outside"])
@pytest.mark.parametrize("profile", SANDBOXED)
async def test_a_fifo_is_written_only_in_a_workspace_the_profile_writes(
    reach: Reach, profile: SandboxProfile, where: str
) -> None:
    planted = reach.planted[where]
    result = await reach.at.approved(f"echo leak > {planted.fifo}", profile, "tool_1")
    if profile == SandboxProfile.WORKSPACE_WRITE and where == "workspace":
        assert result.ok and planted.heard() == [f"{planted.fifo} got b'leak\\n'"], "its own workspace"
        return
    assert not result.ok and "Permission denied" in result.content["output"], result.content
    assert planted.heard() == []


@needs_seccomp
@pytest.mark.parametrize("where", ["trusted", "workspace", "outside"])
@pytest.mark.parametrize("profile", SANDBOXED)
async def test_no_unix_socket_is_connected_to(reach: Reach, profile: SandboxProfile, where: str) -> None:
    planted = reach.planted[where]
    result = await reach.at.approved(_connect(planted.unix), profile, "tool_1")
    assert not result.ok and "Address family not supported" in result.content["output"], result.content
    assert planted.heard() == []
    pair = await reach.at.approved(
        f"{sys.executable} -c 'import socket; socket.socketpair()'", profile, "tool_2"
    )
    assert pair.ok, f"a socket pair reaches nothing and still works: {pair.content}"


@pytest.mark.parametrize("profile", SANDBOXED)
async def test_the_kernels_settings_are_read_only(reach: Reach, profile: SandboxProfile) -> None:
    """A sysctl written with its own value (never a new one), SysRq and core_pattern opened for
    writing and nothing written: each refused, the host's value as it was."""
    before = await asyncio.to_thread(LEASE.read_text)
    refused = ("Read-only file system", "Permission denied", "No such file")  # a kernel without SysRq
    commands = [
        f'v=$(cat {LEASE}) && echo "$v" > {LEASE}',
        f": >> {SYSRQ}",
        ": >> /proc/sys/kernel/core_pattern",
    ]
    for step, command in enumerate(commands):
        result = await reach.at.approved(command, profile, f"tool_{step}")
        said = result.content["output"]
        assert not result.ok and any(why in said for why in refused), (command, result.content)
    assert await asyncio.to_thread(LEASE.read_text) == before


def _running(marker: str) -> int | None:
    """The host's pid of a process whose arguments hold `marker`."""
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker.encode() in (entry / "cmdline").read_bytes():
                    return int(entry.name)
            except OSError:  # gone meanwhile
                continue
    return None


async def _host_ids(run: asyncio.Task[ToolResult | None], marker: str) -> tuple[list[str], list[str]]:
    """The real, effective, saved and file-system uids and gids, as the host sees them, of the
    sandboxed process whose arguments hold `marker` (found while it runs); then it is ended."""

    async def find() -> int | None:
        return await asyncio.to_thread(_running, marker)

    pid = await assert_eventually(find, lambda found: found is not None, within=20, what=f"{marker} running")
    assert pid is not None
    lines = (await asyncio.to_thread((Path("/proc") / str(pid) / "status").read_text)).splitlines()
    status = {key: value.split() for key, _, value in (line.partition(":") for line in lines)}
    os.kill(pid, signal.SIGKILL)
    await run
    return status["Uid"], status["Gid"]


@pytest.mark.parametrize("profile", [None, *SANDBOXED])
async def test_a_sandboxed_command_is_not_root_on_the_host(
    reach: Reach, profile: SandboxProfile | None
) -> None:
    """Read from outside, in /proc/<pid>/status, while the command (free: no profile) runs."""
    marker = f"waiting-{uuid.uuid4().hex[:8]}.txt"
    (reach.at.work / marker).write_text("\n")
    command = f"tail -f {marker}"
    run = asyncio.create_task(
        reach.at.free(command) if profile is None else reach.at.approved(command, profile, "tool_1")
    )
    uids, gids = await _host_ids(run, marker)
    assert uids == [str(UID)] * 4 and gids == [str(GID)] * 4, (uids, gids)
    assert "0" not in uids


async def test_workspace_write_edits_the_workspace_as_the_sandboxes_user(reach: Reach) -> None:
    """It creates and edits files there (those the worker made before it started, and after); the
    worker reads them; what it creates is its user's, what it edits keeps its owner."""
    later = reach.ws / "later.txt"
    later.write_text("the worker's, made after the sandbox was set up\n")
    edit = (
        f"cd {reach.ws} && echo new > new.txt && sed -i s/new/edited/ new.txt && echo more >> existing.txt "
        "&& echo more >> later.txt && mkdir made && echo deep > made/deep.txt"
    )
    result = await reach.at.approved(edit, SandboxProfile.WORKSPACE_WRITE, "tool_1")
    assert result.ok, result.content
    assert (reach.ws / "new.txt").read_text() == "edited\n"
    assert (reach.ws / "existing.txt").read_text() == "the worker's\nmore\n"
    assert later.read_text().endswith("more\n")
    assert (reach.ws / "made" / "deep.txt").read_text() == "deep\n"
    owners = {name: (reach.ws / name).stat().st_uid for name in ("new.txt", "made", "made/deep.txt")}
    assert owners == dict.fromkeys(owners, UID), "what it creates is its user's"
    assert (reach.ws / "existing.txt").stat().st_uid == os.getuid(), "what it edits keeps its owner"


@pytest.mark.skipif(os.getuid() != 0, reason="a worker that is not root runs its commands as itself")
async def test_a_file_the_sandboxes_user_may_not_write_is_a_clear_error(reach: Reach) -> None:
    """Made by root (a `full` command, the worker) with a mode that gives nobody else a thing."""
    private = reach.ws / "private.txt"
    os.close(os.open(private, os.O_CREAT | os.O_WRONLY, 0o600))
    result = await reach.at.approved(f"echo more >> {private}", SandboxProfile.WORKSPACE_WRITE, "tool_1")
    assert not result.ok and "Permission denied" in result.content["output"], result.content
    assert private.read_text() == ""


@pytest.mark.parametrize("profile", SANDBOXED)
async def test_git_works_in_a_repository_the_sandboxes_user_does_not_own(
    reach: Reach, profile: SandboxProfile
) -> None:
    """git refuses a repository another user owns ("dubious ownership"); inside an approved sandbox
    that check guards nothing the approval did not already allow."""
    git = await asyncio.create_subprocess_exec("git", "init", "-q", str(reach.ws))
    assert await git.wait() == 0
    result = await reach.at.approved(f"git -C {reach.ws} status --short", profile, "tool_1")
    assert result.ok and "existing.txt" in result.content["output"], result.content
