"""Would-be escapes from the terminal's free commands: each is either asked for, or runs harmlessly.

Harmless means: every file of the trusted folder, of the folder outside it and of the worker's data
dir is as it was; the secret planted outside the trusted folder, in the worker's data dir and in
the worker's environment is not in the answer; the clock was not set; no connection reached a
server of this machine, and nothing reached the FIFOs and Unix sockets planted in the trusted
folder and outside it (root's, writable by anyone, served by the test). A real bwrap on a real PTY runs every command (skipped, with the reason,
where bubblewrap is missing).
"""

from __future__ import annotations

import asyncio
import json
import os
import pwd
import re
import shutil
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contracts import SandboxProfile

from .sandboxing import LANDLOCK, SECCOMP, SECRET, Bench, Planted, bench, needs_bwrap, needs_landlock

pytestmark = needs_bwrap

ASK, RUN = "asks", "runs harmlessly"
NOW = int(time.time())

ESCAPES: list[tuple[str, str, str]] = [
    # --- write flags of allowlisted programs
    ("find . -name victim.txt -delete", ASK, "find deletes with no shell syntax"),
    ("find . -delete", ASK, "find deletes everything"),
    ("find . -fprint victim.txt", ASK, "find truncates a file it prints to"),
    ("find . -fprint0 new.bin", ASK, "find creates a file it prints to"),
    ("find . -fls victim.txt", ASK, "find writes a listing over a file"),
    ("find . -fprintf victim.txt %p", ASK, "find writes formatted output over a file (a named pipe too)"),
    ("find . -newer README.md -delete", ASK, "find deletes what is newer"),
    ("find . -execdir rm victim.txt +", ASK, "find runs a program"),
    ("find . -exec rm -f victim.txt ;", ASK, "find runs a program (needs ;)"),
    ("find . -ok rm victim.txt ;", ASK, "find runs a program after asking"),
    ("echo gone > victim.txt", ASK, "a redirect writes"),
    ("cat README.md >> victim.txt", ASK, "a redirect appends"),
    ("touch pwned.txt", ASK, "touch is not read-only"),
    ("rm victim.txt", ASK, "rm is not read-only"),
    ("du --files0-from=victim.txt", RUN, "du reads names from a file"),
    # --- a FIFO and a Unix socket a host process serves, in the trusted folder
    ("find . -maxdepth 0 -fprintf pipe leak", ASK, "find writes into a FIFO (approved: test_reach)"),
    ("find . -maxdepth 0 -fprint pipe", ASK, "find prints into a FIFO (approved: test_reach)"),
    ("find . -maxdepth 0 -fls pipe.sock", ASK, "find writes to a Unix socket's path"),
    ("cat pipe.sock", RUN, "cat opens a Unix socket"),
    ("find ../outside -fprint ../outside/pipe", ASK, "a FIFO outside"),
    # --- paths outside the trusted folder: absolute, relative, ~, symlinks, /proc
    ("cat /etc/passwd", ASK, "an absolute path outside"),
    ("grep -r root /etc/shadow", ASK, "password hashes"),
    ("cat ../outside/secret.txt", ASK, "a relative path out"),
    ("grep -r synapse-canary ..", ASK, "a search of the parent"),
    ("cat link_to_secret", RUN, "a symlink to a secret (not named as a path)"),
    ("cat link_to_outside/secret.txt", ASK, "a path through a symlink out"),
    ("ls link_to_outside", RUN, "a symlinked folder outside"),
    ("ls link_to_data", RUN, "a symlink to the worker's data dir"),
    ("stat -L link_to_secret", RUN, "stat follows a symlink out"),
    ("du -L link_to_data", RUN, "du follows a symlink out"),
    ("find -L . -name secret.txt", RUN, "find follows symlinks"),
    ("grep -R synapse-canary .", RUN, "grep follows symlinks"),
    ("cat ~/.bashrc", ASK, "a file in home"),
    ("ls ~", ASK, "home"),
    ("ls -la /", ASK, "the root folder"),
    ("find / -name shadow", ASK, "a search of everything"),
    ("stat /root", ASK, "root's home"),
    ("wc -c /etc/shadow", ASK, "a secret's size"),
    ("tail --follow=name ../outside/secret.txt", ASK, "an option's value naming a path out"),
    ("grep -f ../outside/secret.txt README.md", ASK, "patterns read from a secret"),
    ("grep -f../outside/secret.txt README.md", ASK, "the same with the path glued to the flag"),
    ("grep -f/etc/passwd README.md", ASK, "patterns read from an absolute path glued to the flag"),
    ("grep -rf/etc/passwd .", ASK, "the path glued to combined flags"),
    ("date -f/etc/shadow", ASK, "dates read from a secret, the path glued to the flag"),
    ("du -X/etc/shadow", ASK, "exclude patterns read from a secret, the path glued to the flag"),
    ("cat ../data/worker-secret.txt", ASK, "the worker's data dir"),
    # --- the worker's environment
    ("cat /proc/self/environ", ASK, "the environment of the command itself"),
    ("cat /proc/1/environ", ASK, "the environment of pid 1"),
    (f"cat /proc/{os.getpid()}/environ", ASK, "the environment of the worker"),
    ("grep -a synapse /proc/self/environ", ASK, "a search of the environment"),
    ("echo $SYNAPSE_CANARY", ASK, "a variable of the worker"),
    # --- time and system changes
    (f"date -s @{NOW}", RUN, "setting the clock (to now: harmless even if it worked)"),
    (f"date --set=@{NOW}", RUN, "setting the clock, long option"),
    ("uname -a", RUN, "reading the system's name"),
    ("whoami", RUN, "who the command runs as"),
    ("df", RUN, "the file systems (the sandbox's own)"),
    # --- network
    ("cat /dev/tcp/127.0.0.1/{port}", ASK, "bash's network path"),
    ("grep -r . /sys/class/net", ASK, "network interfaces"),
    # --- text that would act on the shell's line editor or the terminal, not be part of the command
    (
        "echo A\x15touch pwned.txt\r",
        RUN,
        "Ctrl-U erases the line typed so far, a carriage return runs the rest",
    ),
    ("ls \x03 touch pwned.txt\r:", RUN, "Ctrl-C flushes the line, the rest runs outside"),
    ("cat \x1b]697;StartPrompt\x07", RUN, "an escape sequence in the command"),
    ("echo \tREADME", RUN, "a tab would complete file names"),
    ("cat \u202eREADME.md", RUN, "a direction override: the card would read otherwise"),
    ("ls\u2028touch pwned.txt", RUN, "a line separator: the card would show two lines"),
    ("cat c1.txt", RUN, "8-bit control sequences (CSI, OSC) in a file's text"),
    # --- long output, long run
    ("cat big.txt", RUN, "3 MB of output is bounded"),
    ("tail -f README.md", RUN, "a command that never ends is stopped"),
]


@pytest.fixture
async def escapes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Bench]:
    at = bench(tmp_path, monkeypatch, terminal_idle_seconds=3)
    (at.work / "big.txt").write_text("y" * 80 + "\n" * 1 + ("z" * 99 + "\n") * 30_000)
    (at.work / "c1.txt").write_text("\x9b2J\x9b31mred\x9b0m \x9d0;title\x9cplain\x85\n")
    yield at
    await at.close()


@pytest.fixture
def planted(escapes: Bench) -> Iterator[list[Planted]]:
    """A FIFO and a Unix socket in the trusted folder and outside it, served by the test."""
    served = [Planted.at(escapes.work), Planted.at(escapes.outside)]
    yield served
    for each in served:
        each.close()


@pytest.fixture
async def listener() -> AsyncIterator[tuple[int, list[str]]]:
    """A TCP server on loopback that records every connection it gets."""
    reached: list[str] = []

    async def record(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        reached.append(str(writer.get_extra_info("peername")))
        writer.close()

    server = await asyncio.start_server(record, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    yield port, reached
    server.close()
    await server.wait_closed()


UNSEEN = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
"""Control characters (ESC and C1 included) but a tab and a newline: never in an answer's output."""


def test_the_table_covers_every_kind_of_escape() -> None:
    assert len(ESCAPES) >= 40
    assert {expected for _, expected, _ in ESCAPES} == {ASK, RUN}


def _test_id(command: str) -> str:
    """The row's id, the same in every pytest-xdist worker (no pid, no clock)."""
    return command.replace(f"/proc/{os.getpid()}/", "/proc/<worker pid>/").replace(str(NOW), "<now>")


FIFO_ROWS = {"find . -maxdepth 0 -fprintf pipe leak", "find . -maxdepth 0 -fprint pipe"}
"""Rows only Landlock makes harmless (skipped, with the reason, where the kernel has none)."""


@pytest.mark.parametrize(
    ("command", "expected", "why"),
    [pytest.param(*row, marks=[needs_landlock] if row[0] in FIFO_ROWS else []) for row in ESCAPES],
    ids=[_test_id(row[0]) for row in ESCAPES],
)
async def test_a_would_be_escape_is_asked_for_or_harmless(
    escapes: Bench,
    listener: tuple[int, list[str]],
    planted: list[Planted],
    command: str,
    expected: str,
    why: str,
) -> None:
    port, reached = listener
    command = command.replace("{port}", str(port))
    before, clock = escapes.untouched(), time.time()
    result = await escapes.free(command)
    assert (ASK if result is None else RUN) == expected, f"{command!r} ({why})"
    assert escapes.untouched() == before, f"{command!r} changed a file ({why})"
    assert not (escapes.work / "pwned.txt").exists()
    assert abs(time.time() - clock) < 60, "the clock moved"
    assert reached == [], "a server of this machine was reached"
    assert [heard for each in planted for heard in each.heard()] == [], f"{command!r} ({why})"
    if result is None:
        return
    said = json.dumps(result.content) + (result.error or "")
    assert SECRET not in said.replace(command, ""), f"{command!r} revealed the secret ({why})"
    output = result.content["output"] if isinstance(result.content, dict) else ""
    assert not UNSEEN.search(output), f"{command!r}: a control character reached the answer ({why})"
    if "control character" in (result.error or ""):
        assert not result.ok and "sandbox" not in result.metadata, "refused before anything ran"
        return
    assert result.metadata["sandbox"] == "trusted-read-only"


async def test_what_the_free_sandbox_refuses_it_says(escapes: Bench) -> None:
    """The clock cannot be set; output is bounded; a command that never ends is stopped. (A free
    command has no write flags left: `find -delete` asks; what a write meets in the sandbox:
    `test_even_a_program_no_one_should_allow_is_contained`.)"""
    assert await escapes.free("find . -name victim.txt -delete") is None
    clock = await escapes.free(f"date -s @{NOW}")
    assert clock is not None and "Operation not permitted" in clock.content["output"]
    big = await escapes.free("cat big.txt")
    assert big is not None and big.ok and "truncated" in big.metadata
    endless = await escapes.free("tail -f README.md")
    assert endless is not None and endless.content["exit_status"] == 130 and "Ctrl-C" in (endless.error or "")
    dangling = await escapes.free("cat link_to_secret")
    assert dangling is not None and "No such file" in dangling.content["output"]


async def test_a_files_8_bit_control_sequences_never_reach_the_answer(escapes: Bench) -> None:
    """`cat` of a file holding CSI (U+009B), OSC (U+009D ... ST U+009C) and NEL (U+0085): the text
    stays, the sequences go whole."""
    shown = await escapes.free("cat c1.txt")
    assert shown is not None and shown.ok and shown.content["output"] == "red plain\n"


REFUSED = [
    "write",
    "delete",
    "secret",
    "symlinked secret",
    "signal the worker",
    "connect",
    "set the clock",
    "set the hostname",
    "remount writable",
    "home",
    "write a sysctl",
    "open the SysRq trigger",
    *(["write a FIFO"] if LANDLOCK else []),
    *(["connect a Unix socket"] if SECCOMP else []),
]
"""What the sandbox must refuse (a FIFO and a Unix socket where the kernel has Landlock and seccomp:
`test_reach` skips, saying why, where not). Typing into the terminal (TIOCSTI) reaches only the
sandbox's own terminal (util-linux `script`'s), gone with the command: what was typed is checked on
the host."""


async def test_even_a_program_no_one_should_allow_is_contained(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, listener: tuple[int, list[str]]
) -> None:
    """An allowlist with python3 on it (a mistake) still cannot write, read secrets, reach the
    network, set the clock, remount, type into the session's shell or see the worker."""
    port, reached = listener
    at = bench(tmp_path, monkeypatch, allow="python3,ls")
    served = Planted.at(at.work)
    try:
        shutil.copy(Path(__file__).with_name("escape.py"), at.work / "escape.py")
        before = at.untouched()
        asked = await at.free(
            f"python3 escape.py {port} {os.getpid()} {at.outside / 'secret.txt'} pipe pipe.sock"
        )
        assert asked is None, "an absolute path outside is still asked for"
        result = await at.free(
            f"python3 escape.py {port} {os.getpid()} link_to_outside_secret pipe pipe.sock"
        )
        assert result is not None and result.ok, result
        report = json.loads(result.content["output"].splitlines()[-1])  # after what its own terminal echoed
        assert [name for name in REFUSED if report[name][0]] == [], report
        assert SECRET not in result.content["output"]
        assert "SYNAPSE_CANARY" not in report["environment"][1] and "PATH" in report["environment"][1]
        assert "SYNAPSE_CANARY" not in str(report["pid 1 environment"][1])
        assert len(report["processes"][1]) <= 3, f"only the sandbox's own processes: {report['processes']}"
        assert not {"shadow", "gshadow", "hostname", "hosts"} & set(report["etc"][1])
        me = pwd.getpwuid(os.getuid()).pw_name
        users = ["sandbox", me] if os.getuid() == 0 else [me]  # who it runs as, and who owns the files
        assert [line.split(":")[0] for line in report["users"][1]] == users, "the two users alone"
        assert report["uid"][1] != 0, "not root"
        after = await at.approved("true", SandboxProfile.FULL, "tool_1")  # anything typed would run now
        assert after.ok and at.untouched() == before
        assert not (at.work / "injected-by-tiocsti").exists()
        assert reached == [] and (served.heard() == [] or not (LANDLOCK and SECCOMP))
    finally:
        served.close()
        await at.close()


async def test_the_worker_data_dir_inside_the_trusted_folder_stays_hidden(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`make up` keeps its data (.synapse) and settings (.env) in the folder it trusts by default."""
    at = bench(tmp_path, monkeypatch, data_in_work=True)
    try:
        assert at.data == at.work / ".synapse"
        listing = await at.free("ls -la .synapse")
        assert listing is not None and "worker-secret.txt" not in listing.content["output"]
        for command in ("cat .env", "grep -r synapse-canary .", "cat .synapse/worker-secret.txt"):
            result = await at.free(command)
            assert result is not None and SECRET not in result.content["output"], command
        approved = await at.approved("cat .env; ls -A .synapse", SandboxProfile.READ_ONLY, "tool_1")
        assert approved.content["output"] == "cat: .env: Permission denied\n", approved.content
    finally:
        await at.close()


PROGRAMS = [
    "ls",
    "pwd",
    "cat",
    "head",
    "tail",
    "wc",
    "echo",
    "date",
    "whoami",
    "uname",
    "grep",
    "find",
    "stat",
    "du",
    "df",
]
FIFO = ["pipe"] if LANDLOCK else []
"""The planted FIFO as a word, where Landlock keeps it closed (`test_reach` says why not elsewhere)."""
WORDS = {
    "find": [
        *FIFO,
        "-delete",
        "-fprint",
        "-fprint0",
        "-fls",
        "-fprintf",
        "-L",
        "-name",
        "-newer",
        "-execdir",
        "-exec",
        "+",
        "-type",
        "f",
    ],
    "date": ["-s", "--set", f"@{NOW}", "-f", "--file"],
    "grep": ["-r", "-R", "-f", "-a", "-l", "--include", "--exclude-from", "x", "synapse-canary"],
    "tail": ["-n", "5", "-c", "+1", "--pid", "1"],
    "head": ["-c", "100", "-n", "-1"],
    "du": ["-L", "-a", "--files0-from", "-s", *FIFO],
    "stat": ["-L", "-f", "-c", "%n", *FIFO],
    "cat": ["-A", "-n", "-v"],
    "ls": ["-la", "-R", "-L", "--color=always", "-d", *FIFO],
    "wc": ["--files0-from", "-c", "-l"],
}
INSIDE = [
    "README.md",
    "victim.txt",
    "sub",
    ".",
    "link_to_secret",
    "link_to_outside",
    "link_to_data",
    "new.txt",
    "pipe.sock",
]
"""Names in the trusted folder (some of them symlinks out, a Unix socket a test serves): commands
naming them run free. Its FIFO (`pipe`) is among the words of programs that do not read what they
name (find's, stat's, ls's, du's): a program reading it would wait for a writer until Ctrl-C."""
PATHS = [
    "README.md",
    "victim.txt",
    "sub",
    "sub/deep.txt",
    ".",
    "..",
    "/",
    "~",
    "~/.bashrc",
    "link_to_secret",
    "link_to_outside",
    "link_to_outside/secret.txt",
    "link_to_data",
    "../outside/secret.txt",
    "../data/worker-secret.txt",
    "/proc/self/environ",
    "/proc/1/environ",
    "/etc/shadow",
    "/etc/passwd",
    "new.txt",
    "/dev/tcp/127.0.0.1/9",
    "-",
]


@st.composite
def commands(draw: st.DrawFn) -> str:
    """An allowlisted program with up to four words: its own risky flags, paths in and out of the
    trusted folder, and a few arbitrary words."""
    program = draw(st.sampled_from(PROGRAMS))
    word = st.one_of(
        st.sampled_from(WORDS.get(program, []) or INSIDE),
        st.sampled_from(INSIDE),
        st.sampled_from(PATHS),
        st.from_regex(r"[a-z0-9._=@%+-]{1,8}", fullmatch=True),
    )
    words = draw(st.lists(word, min_size=1, max_size=4))
    return " ".join([program, *words])


@pytest.fixture(scope="module")
async def shared_bench(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[tuple[Bench, Planted]]:
    """One terminal for every generated command, as one session would have, and a FIFO and a Unix
    socket in its trusted folder."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        at = bench(tmp_path_factory.mktemp("property"), monkeypatch, terminal_idle_seconds=3)
        served = Planted.at(at.work)
        yield at, served
        served.close()
        await at.close()


@settings(
    max_examples=200,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(command=commands())
async def test_no_generated_command_changes_a_file_or_reads_the_secret_without_approval(
    shared_bench: tuple[Bench, Planted], command: str
) -> None:
    at, served = shared_bench
    before = at.untouched()
    result = await at.free(command)
    assert at.untouched() == before, f"{command!r} changed a file"
    assert served.heard() == [], f"{command!r} reached the FIFO or the socket"
    if result is not None:
        assert SECRET not in json.dumps(result.content).replace(command, ""), f"{command!r} read the secret"
        output = result.content["output"] if isinstance(result.content, dict) else ""
        assert not UNSEEN.search(output), f"{command!r}: a control character in the answer"
