"""Approved commands under each sandbox profile, on a real PTY in real bubblewrap sandboxes."""

from __future__ import annotations

import asyncio
import logging
import shutil
import sys
import uuid
from asyncio.subprocess import PIPE
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from activities.tools.terminal.confinement import Confinement
from activities.tools.terminal.layout import TMP
from activities.tools.terminal.policy import SOURCE_ROOT
from activities.tools.terminal.sandbox import Sandbox
from activities.tools.terminal.tool import TerminalTool
from contracts import SandboxProfile
from core.settings import Settings, ToolSettings

from ....conftest import assert_eventually
from .sandboxing import SECRET, Bench, bench, needs_bwrap

pytestmark = needs_bwrap


@pytest.fixture
async def at(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Bench]:
    terminal = bench(tmp_path, monkeypatch)
    yield terminal
    await terminal.close()


@pytest.mark.parametrize("command", ["ls", "cat README.md", "grep -n x notes.txt", "ls -la sub"])
async def test_benign_commands_still_run_free_and_print_what_they_would_anywhere(
    at: Bench, command: str
) -> None:
    result = await at.free(command)
    assert result is not None, f"{command!r} runs without approval"
    assert result.metadata["sandbox"] == "trusted-read-only" and result.metadata["exit_status"] == 0
    bare = await at.approved(f"{command} | cat", SandboxProfile.FULL, "tool_1")  # its output is a pipe
    assert result.ok and result.content["output"] == bare.content["output"] != ""


@pytest.mark.parametrize(
    ("profile", "inside", "outside"),
    [
        (SandboxProfile.WORKSPACE_WRITE, True, False),
        (SandboxProfile.READ_ONLY, False, False),
        (SandboxProfile.FULL, True, True),
    ],
)
async def test_where_an_approved_command_may_write(
    at: Bench, profile: SandboxProfile, inside: bool, outside: bool
) -> None:
    result = await at.approved("touch made.txt; touch ../outside/made.txt; true", profile, "tool_1")
    assert result.ok and result.metadata["sandbox"] == str(profile)
    assert (at.work / "made.txt").exists() == inside
    assert (at.outside / "made.txt").exists() == outside
    if not outside:
        assert "touch: cannot touch '../outside/made.txt'" in result.content["output"]


@pytest.fixture
async def listener() -> AsyncIterator[tuple[int, list[str]]]:
    reached: list[str] = []

    async def record(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        reached.append("connected")
        writer.close()

    server = await asyncio.start_server(record, "127.0.0.1", 0)
    yield server.sockets[0].getsockname()[1], reached
    server.close()
    await server.wait_closed()


@pytest.mark.parametrize(
    ("network", "profile", "reaches"),
    [
        ("none", SandboxProfile.WORKSPACE_WRITE, False),
        ("none", SandboxProfile.READ_ONLY, False),
        ("host", SandboxProfile.WORKSPACE_WRITE, True),
        ("host", SandboxProfile.READ_ONLY, False),
    ],
)
async def test_the_hosts_network_and_its_services_are_out_of_reach_unless_shared(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    listener: tuple[int, list[str]],
    network: str,
    profile: SandboxProfile,
    reaches: bool,
) -> None:
    """A server on the host's loopback stands for Synapse's own API and Temporal, which a sandboxed
    command could otherwise ask to approve its next command: only `SYNAPSE_TERMINAL_NETWORK=host`
    lets workspace-write commands reach the host's network."""
    port, reached = listener
    at = bench(tmp_path, monkeypatch, terminal_network=network)
    try:
        result = await at.approved(f"exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected", profile, "tool_1")
        assert result.ok == reaches, result.content
        await assert_eventually(lambda: asyncio.sleep(0, reached), lambda r: bool(r) == reaches, within=5)
    finally:
        await at.close()


@pytest.mark.parametrize("profile", [SandboxProfile.READ_ONLY, SandboxProfile.WORKSPACE_WRITE])
async def test_a_sandbox_has_a_tmp_of_its_own_gone_with_the_command(
    at: Bench, profile: SandboxProfile
) -> None:
    """Writable unless a folder it shows read-only lies in /tmp (here the trusted folder, under
    read-only), whose FIFOs would be writable with it (Landlock grants a folder and all below)."""
    sandbox = at.tool.policy.sandbox()[0]
    assert sandbox is not None
    writable = TMP in sandbox.tmps(profile) or not sandbox.confinement.landlock
    assert writable == (profile == SandboxProfile.WORKSPACE_WRITE or not sandbox.confinement.landlock)
    for step, tmp in enumerate(("/tmp", "/var/tmp", "/dev/shm")):
        name = f"{tmp}/synapse-test-{uuid.uuid4().hex}"
        wrote = await at.approved(f"echo mine > {name} && cat {name}", profile, f"tool_{step}_wrote")
        if tmp == "/tmp" and not writable:
            assert not wrote.ok and "Permission denied" in wrote.content["output"], wrote.content
            continue
        assert wrote.ok and wrote.content["output"] == "mine\n", wrote.content
        assert not await asyncio.to_thread(Path(name).exists), "the host's is untouched"
        later = await at.approved(f"cat {name}", profile, f"tool_{step}_later")
        assert not later.ok and "No such file" in later.content["output"]


def test_no_tmp_is_writable_that_holds_a_folder_shown_read_only() -> None:
    """A folder shown read-only in /tmp closes it (its FIFOs would be writable with it); the
    workspace there closes it only where it is not written."""
    confinement = Confinement(uid=60001, gid=60001, landlock=7)

    def tmps(trusted: str, workspace: str, profile: SandboxProfile) -> list[Path]:
        sandbox = Sandbox(
            bwrap="/usr/bin/bwrap",
            trusted=(Path(trusted),),
            workspace=Path(workspace),
            confinement=confinement,
        )
        return sandbox.tmps(profile)

    assert TMP not in tmps("/tmp/project", "/srv/project", SandboxProfile.WORKSPACE_WRITE)
    assert TMP not in tmps("/srv/project", "/tmp/project", SandboxProfile.READ_ONLY)
    assert TMP in tmps("/tmp/project", "/tmp/project", SandboxProfile.WORKSPACE_WRITE)
    assert TMP in tmps("/tmp/project/docs", "/tmp/project", SandboxProfile.WORKSPACE_WRITE)
    assert TMP in tmps("/srv/project", "/srv/project", SandboxProfile.READ_ONLY)


async def test_background_processes_end_with_their_sandboxed_command(at: Bench) -> None:
    marker = f"{uuid.uuid4().int % 1000}.{uuid.uuid4().int % 1000}"
    result = await at.approved(f"sleep 3{marker} & echo started", SandboxProfile.WORKSPACE_WRITE, "tool_1")
    assert result.ok and result.content["output"] == "started\n"

    async def running() -> bool:
        found = await asyncio.create_subprocess_exec("pgrep", "-f", f"sleep 3{marker}", stdout=PIPE)
        await found.communicate()
        return found.returncode == 0

    await assert_eventually(running, lambda alive: not alive, within=10, what="the background sleep gone")


async def test_the_folder_comes_back_to_the_terminal_and_exports_stay_in_its_sandboxes(at: Bench) -> None:
    moved = await at.approved("cd sub && export STAGE=two", SandboxProfile.WORKSPACE_WRITE, "tool_1")
    assert moved.ok and moved.content["cwd"] == str(at.work / "sub")
    listed = await at.free("ls")
    assert listed is not None and listed.content["output"] == "deep.txt\n", "a free command runs where it is"
    inside = await at.approved("echo $STAGE in $(basename $PWD)", SandboxProfile.READ_ONLY, "tool_2")
    assert inside.content["output"] == "two in sub\n", "later sandboxed commands start with its exports"
    outside = await at.approved("echo ${STAGE:-unset} in $(basename $PWD)", SandboxProfile.FULL, "tool_3")
    assert outside.content["output"] == "unset in sub\n", "the terminal's own environment is untouched"
    back = await at.approved("cd .. && unset STAGE", SandboxProfile.READ_ONLY, "tool_4")
    assert back.content["cwd"] == str(at.work)
    gone = await at.approved("echo ${STAGE:-unset}", SandboxProfile.WORKSPACE_WRITE, "tool_5")
    assert gone.content["output"] == "unset\n"


async def test_the_folder_shown_is_where_the_terminal_really_is(at: Bench) -> None:
    linked = await at.approved("ln -s /etc build && cd build", SandboxProfile.WORKSPACE_WRITE, "tool_1")
    assert linked.content["cwd"] == "/etc", "a symlinked folder is shown as where it leads"
    back = await at.approved(f"cd {at.work}", SandboxProfile.FULL, "tool_2")
    assert back.content["cwd"] == str(at.work)
    odd = await at.approved(
        "mkdir -p $'x\\n/srv' && cd $'x\\n/srv'", SandboxProfile.WORKSPACE_WRITE, "tool_3"
    )
    assert odd.content["cwd"] == str(at.work), "a folder whose name holds a newline is not gone to"
    shown = await at.approved("cd $'x\\n/srv'", SandboxProfile.FULL, "tool_4")
    assert shown.content["cwd"] == f"{at.work}/x?/srv", "its newline shown as `?`, never as a second line"


async def test_a_sandbox_that_cannot_start_is_a_clear_error_and_runs_nothing(at: Bench) -> None:
    marker = at.outside / "ran.txt"
    started = await at.free("ls")
    assert started is not None and started.ok
    shutil.rmtree(at.work)  # the workspace the sandbox mounts is gone
    result = await at.approved(f"touch {marker}", SandboxProfile.WORKSPACE_WRITE, "tool_1")
    assert not result.ok and result.metadata["sandbox_failed"] is True
    assert (result.error or "").startswith("the sandbox did not run the command: bwrap: "), result.error
    assert not marker.exists()
    fresh = await at.free("ls")
    assert fresh is not None and not fresh.ok, "nothing runs free there either"


async def test_a_terminal_that_cannot_start_says_where(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    at = bench(tmp_path, monkeypatch)
    shutil.rmtree(at.work)
    result = await at.approved("true", SandboxProfile.FULL, "tool_1")
    assert (
        not result.ok
        and result.error == f"no terminal: could not start bash in {at.work}: No such file or directory"
    )


async def test_control_characters_in_an_approved_command_are_refused(at: Bench) -> None:
    """Ctrl-C would flush the shell's input and the rest would run without a sandbox."""
    result = await at.approved(f"ls \x03 touch {at.outside}/escaped\r:", SandboxProfile.READ_ONLY, "tool_1")
    assert not result.ok and "control character U+0003 at position 3" in (result.error or "")
    assert not (at.outside / "escaped").exists()


async def test_what_a_sandbox_carries_out_never_makes_the_shell_run_anything(at: Bench) -> None:
    """Mail checks, history expansion, PATH, PROMPT_COMMAND and control characters in an exported
    value: the terminal's shell runs none of it (each was a way out of the sandbox once)."""
    mail = f"$PWD/mbox?\\$(touch {at.outside}/by-mail)"
    setup = (
        f'echo x >> mbox; export MAILCHECK=0 MAILPATH="{mail}" histchars=@ PATH="$PWD/bin:$PATH" '
        f"PROMPT_COMMAND='touch {at.outside}/by-prompt' X=$'A\\x15touch {at.outside}/by-carry\\r' KEPT=yes"
    )
    carried = await at.approved(setup, SandboxProfile.WORKSPACE_WRITE, "tool_1")
    assert carried.ok, carried
    for step, command in enumerate(["sleep 1; echo y >> mbox", "true"], start=2):  # a newer mtime
        assert (await at.approved(command, SandboxProfile.WORKSPACE_WRITE, f"tool_{step}")).ok
        await at.free("ls")
    expanded = await at.free("echo @-1:1 @-1:0")
    assert expanded is not None and expanded.content["output"] == "@-1:1 @-1:0\n", "no history expansion"
    inside = await at.approved('printf "%s|%q" "$KEPT" "$X"', SandboxProfile.READ_ONLY, "tool_8")
    assert inside.content["output"] == "yes|$'A\\025touch " + str(at.outside) + "/by-carry\\r'", (
        "a value is data"
    )
    shell = await at.approved(
        'printf "%s|%s|%s" "${KEPT:-}" "${MAILPATH:-}" "$PATH"', SandboxProfile.FULL, "tool_9"
    )
    kept, mailpath, path = shell.content["output"].split("|", 2)
    assert (kept, mailpath) == ("", "") and str(at.work / "bin") not in path, "none of it reached the shell"
    assert sorted(p.name for p in at.outside.iterdir()) == ["secret.txt"]


async def test_a_sandboxed_command_cannot_change_how_the_next_line_is_read(at: Bench) -> None:
    """It holds the terminal while it runs: `stty intr T` would cut the next line typed into the
    shell at its first `T` (the rest then runs outside every sandbox). The settings come back first."""
    setup = f"stty intr T; export __synapse_command='touch {at.outside}/by-stty'"
    assert (await at.approved(setup, SandboxProfile.READ_ONLY, "tool_1")).ok
    listed = await at.approved("ls -d sub", SandboxProfile.READ_ONLY, "tool_2")
    assert listed.ok and listed.content["output"] == "sub\n"
    cut = "stty intr -; echo written > made-by-workspace-write"
    assert (await at.approved(cut, SandboxProfile.WORKSPACE_WRITE, "tool_3")).ok
    again = await at.free("ls -d sub")
    assert again is not None and again.ok and again.content["output"] == "sub\n"
    interrupted = await at.approved("stty intr T; sleep 30", SandboxProfile.READ_ONLY, "tool_4")
    assert interrupted.metadata["exit_status"] == 130, "Ctrl-C still interrupts"
    assert sorted(p.name for p in at.outside.iterdir()) == ["secret.txt"]


async def test_the_hosts_sockets_are_out_of_reach(at: Bench) -> None:
    """A service listening on a socket in /run (Docker's, D-Bus) trusts root: no sandbox reaches it."""
    path = Path("/run") / f"synapse-test-{uuid.uuid4().hex[:8]}.sock"
    reached: list[str] = []

    async def record(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        reached.append("connected")
        writer.close()

    server = await asyncio.start_unix_server(record, str(path))
    try:
        connect = f"{sys.executable} -c \"import socket; socket.socket(socket.AF_UNIX).connect('{path}')\""
        for step, profile in enumerate([SandboxProfile.READ_ONLY, SandboxProfile.WORKSPACE_WRITE], start=1):
            result = await at.approved(connect, profile, f"tool_{step}")
            said = result.content["output"]  # no such socket, or none at all (seccomp)
            assert not result.ok and ("No such file" in said or "Address family" in said), result.content
        assert reached == []
    finally:
        server.close()
        await server.wait_closed()
        path.unlink(missing_ok=True)


async def test_the_workers_settings_cannot_be_created_or_moved_away(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`.env` and `synapse.toml` are read at the worker's next start: a workspace-write command may
    not create them (an empty read-only placeholder takes their place), nor move the data dir."""
    at = bench(tmp_path, monkeypatch, data_in_work=True, env_file=False, data=Path("work/var/synapse"))
    try:
        write = "echo SYNAPSE_TERMINAL_TRUSTED=/ >> .env; echo '[agents.x]' > synapse.toml; mv var var.moved"
        result = await at.approved(write, SandboxProfile.WORKSPACE_WRITE, "tool_1")
        assert not result.ok
        assert "Device or resource busy" in result.content["output"], result.content
        assert (at.work / ".env").read_text() == "" and (at.work / "synapse.toml").read_text() == ""
        assert (at.data / "worker-secret.txt").read_text().startswith("synapse-canary")
        assert not (at.work / "var.moved").exists()
    finally:
        await at.close()


def test_a_bwrap_a_command_could_replace_is_not_trusted(tmp_path: Path) -> None:
    installed = shutil.which("bwrap")
    assert installed is not None
    inside = tmp_path / "work"
    inside.mkdir()
    shutil.copy(installed, inside / "bwrap")
    sandbox, why = Sandbox.find(str(inside / "bwrap"), [inside], inside)
    assert sandbox is None and "lies in a folder sandboxed commands may read or write" in why
    loose = tmp_path / "loose-bwrap"
    shutil.copy(installed, loose)
    loose.chmod(0o775)
    sandbox, why = Sandbox.find(str(loose), [inside], inside)
    assert sandbox is None and "must be owned by root and writable by root alone" in why


async def test_a_relative_data_dir_cannot_be_shadowed_from_the_workspace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The worker's data dir is `.synapse` by default: the lines typed for a sandbox must name its
    scratch folder absolutely, or a command could `cd` into a copy of it it made, holding bwrap
    arguments and words of its own."""
    monkeypatch.chdir(tmp_path)
    at = bench(tmp_path, monkeypatch, data=Path("data"))
    relative = TerminalTool.from_settings(
        Settings(data_dir=Path("data"), tools=at.tool._tools, _env_file=None)
    )
    relative.prepare()
    shadow = Bench(relative, at.root, at.work, at.outside, at.data)
    try:
        plant = (
            "S=$(readlink /proc/self/fd/9); X=${S%/state}; X=${X##*/}; D=sub/data/terminal/$X; mkdir -p $D; "
            "printf '%s\\0' --bind / / --dev /dev > $D/args; "
            f"printf '%s\\0' /bin/sh -c 'touch {at.outside}/by-relative-path' > $D/words; cd sub"
        )
        assert (await shadow.approved(plant, SandboxProfile.WORKSPACE_WRITE, "tool_1")).ok
        listed = await shadow.free("ls -d data")
        assert listed is not None and listed.ok and listed.content["output"] == "data\n"
        assert sorted(p.name for p in at.outside.iterdir()) == ["secret.txt"]
    finally:
        await shadow.close()
        await at.close()


async def test_the_workers_secrets_are_covered_in_approved_sandboxes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".config" / "temporalio").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text(SECRET)
    (home / ".config" / "temporalio" / "temporal.toml").write_text(f'api_key = "{SECRET}"')
    (home / ".netrc").write_text(f"machine x password {SECRET}")
    (home / ".npmrc").write_text(f"//registry/:_authToken={SECRET}")
    (home / ".config" / "gh").mkdir(parents=True)
    (home / ".config" / "gh" / "hosts.yml").write_text(f"oauth_token: {SECRET}")
    monkeypatch.setenv("HOME", str(home))
    at = bench(tmp_path, monkeypatch)
    try:
        reads = (
            f"cat {home}/.ssh/id_ed25519 {home}/.config/temporalio/temporal.toml {home}/.netrc {home}/.npmrc "
            f"{home}/.config/gh/hosts.yml; head -c 40 /etc/shadow"
        )
        for step, profile in enumerate([SandboxProfile.READ_ONLY, SandboxProfile.WORKSPACE_WRITE], start=1):
            result = await at.approved(reads, profile, f"tool_{step}")
            output = result.content["output"]
            assert SECRET not in output and "root:" not in output, output
        inside = await at.approved(f"ls {at.work}", SandboxProfile.READ_ONLY, "tool_3")
        assert inside.ok and "README.md" in inside.content["output"], "folders shown again are there"
    finally:
        await at.close()


async def test_synapses_own_installation_stays_read_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """`make up` in Synapse's checkout makes it the terminal's workspace: a workspace-write command
    there could change the worker's code or virtualenv, which run at its next start."""
    probe = SOURCE_ROOT / f"sandbox-probe-{uuid.uuid4().hex[:8]}"
    settings = Settings(
        data_dir=tmp_path / "data", tools=ToolSettings(terminal_cwd=SOURCE_ROOT), _env_file=None
    )
    tool = TerminalTool.from_settings(settings)
    with caplog.at_level(logging.WARNING):
        tool.prepare()
    assert any("lies in Synapse's own installation" in r.message for r in caplog.records)
    at = Bench(tool, tmp_path, SOURCE_ROOT, tmp_path, tmp_path / "data")
    try:
        wrote = await at.approved(
            f"touch {probe}; touch {sys.prefix}/probe; echo >> worker.py",
            SandboxProfile.WORKSPACE_WRITE,
            "tool_1",
        )
        said = wrote.content["output"]  # worker.py: refused by Landlock before the read-only mount
        assert not wrote.ok and said.count("Read-only file system") + said.count("Permission denied") == 3, (
            said
        )
        assert not probe.exists() and not (Path(sys.prefix) / "probe").exists()
        assert wrote.error == (
            f"exit status 1: the terminal's workspace {SOURCE_ROOT} lies in Synapse's own installation, "
            "which workspace-write commands cannot change (they could change what the worker runs next); "
            "set SYNAPSE_TERMINAL_CWD or SYNAPSE_TERMINAL_WORKSPACE to a project of its own (`synapse up` "
            "uses .synapse/workspace unless one is set)"
        ), "the error says why, not only the command's `Read-only file system`"
    finally:
        await at.close()
        probe.unlink(missing_ok=True)


async def test_a_workspace_in_the_data_dir_of_a_checkout_is_writable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`synapse up` in Synapse's checkout gives the terminal `.synapse/workspace`: writable, while
    the checkout around it and the rest of its data dir stay out of reach."""
    checkout = tmp_path / "synapse"
    workspace = checkout / ".synapse" / "workspace"
    workspace.mkdir(parents=True)
    (checkout / "worker.py").write_text("print('the real worker')\n")
    (checkout / ".synapse" / "temporal.db").write_text(SECRET)
    monkeypatch.setattr("activities.tools.terminal.policy.SOURCE_ROOT", checkout)
    settings = Settings(
        data_dir=checkout / ".synapse", tools=ToolSettings(terminal_cwd=workspace), _env_file=None
    )
    tool = TerminalTool.from_settings(settings)
    tool.prepare()
    at = Bench(tool, tmp_path, workspace, tmp_path, checkout / ".synapse")
    try:
        touched = await at.approved("touch report.txt", SandboxProfile.WORKSPACE_WRITE, "tool_1")
        assert touched.ok, touched
        assert (workspace / "report.txt").exists()
        reach = f"cat ../temporal.db; echo x >> {checkout}/worker.py"
        out = await at.approved(reach, SandboxProfile.WORKSPACE_WRITE, "tool_2")
        assert SECRET not in out.content["output"], out.content
        assert (checkout / "worker.py").read_text() == "print('the real worker')\n"
    finally:
        await at.close()


async def test_a_sandboxed_command_holds_no_part_of_the_sessions_terminal(at: Bench) -> None:
    """With the session's terminal it could switch its line discipline off, swallow the Ctrl-C and
    the shell's probes, and fake the shell's answer (a cwd, a status). It has a terminal of its own."""
    attack = (
        "import fcntl, termios, time\n"
        "for fd in (0, 1, 2):\n"
        "    try:\n"
        "        fcntl.ioctl(fd, termios.TIOCSETD, (27).to_bytes(4, 'little'))\n"
        "        termios.tcflush(fd, termios.TCIFLUSH)\n"
        "    except OSError as err:\n"
        "        print(fd, err)\n"
        "print('__SYNfake:0:/etc', flush=True)\n"
        "time.sleep(60)\n"
    )
    (at.work / "hold.py").write_text(attack)
    held = await at.approved(f"{sys.executable} hold.py", SandboxProfile.READ_ONLY, "tool_1")
    assert held.content is not None, f"the terminal was not lost: {held.error}"
    assert held.metadata["exit_status"] != 0 and held.content["cwd"] == str(at.work), "nothing faked"
    after = await at.approved("pwd", SandboxProfile.FULL, "tool_2")
    assert after.ok and after.content["output"] == f"{at.work}\n" and after.content["cwd"] == str(at.work)


async def test_a_folder_is_shown_with_every_character_of_its_name(at: Bench) -> None:
    moved = await at.approved(
        "mkdir $'sub\\u00a0 ' && cd $'sub\\u00a0 '", SandboxProfile.WORKSPACE_WRITE, "tool_1"
    )
    assert moved.content["cwd"] == f"{at.work}/sub\u00a0 ", "trailing spaces are part of the name"


async def test_synapses_installation_cannot_be_moved_away_inside_the_workspace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the installation below the workspace (a folder between them), renaming that folder
    would let a command put a new installation in its place."""
    installation = tmp_path / "work" / "apps" / "synapse"
    installation.mkdir(parents=True)
    (installation / "worker.py").write_text("print('the real worker')\n")
    monkeypatch.setattr("activities.tools.terminal.policy.SOURCE_ROOT", installation)
    at = bench(tmp_path, monkeypatch)
    try:
        swap = "mv apps apps-old; mkdir -p apps/synapse; echo \"print('trojan')\" > apps/synapse/worker.py"
        result = await at.approved(swap, SandboxProfile.WORKSPACE_WRITE, "tool_1")
        assert not result.ok and "Device or resource busy" in result.content["output"], result.content
        assert (installation / "worker.py").read_text() == "print('the real worker')\n"
    finally:
        await at.close()
