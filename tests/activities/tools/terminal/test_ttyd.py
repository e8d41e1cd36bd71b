"""The ttyd backend against the real ttyd (when present) and the loopback stand-in (always):
handshake, streamed output, resize, authentication refused both ways, a connection dropped mid-command."""

from __future__ import annotations

import asyncio
import os
import shutil
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path

import pytest

from activities.tools.terminal.backend import TerminalAuthFailed, TerminalLost
from activities.tools.terminal.shell import Shell
from activities.tools.terminal.tool import TerminalTool
from activities.tools.terminal.ttyd import TtydTerminal
from core.settings import Settings, ToolSettings

from ....conftest import assert_eventually
from ....fakes.ttyd import fake_ttyd
from ....support import free_port
from .sandboxing import tool_run

CREDENTIAL = "user:pass"


def ttyd_binary() -> str | None:
    """The real ttyd: SYNAPSE_TTYD_BIN, else on PATH."""
    named = os.environ.get("SYNAPSE_TTYD_BIN")
    if named and Path(named).is_file():
        return named
    return shutil.which("ttyd")


@asynccontextmanager
async def real_ttyd(credential: str | None = CREDENTIAL) -> AsyncIterator[str]:
    """`ttyd -W -c user:pass bash` on a free loopback port; its /ws URL."""
    binary = ttyd_binary()
    assert binary is not None
    port = free_port()
    process = await asyncio.create_subprocess_exec(
        binary,
        "-i",
        "127.0.0.1",
        "-p",
        str(port),
        "-W",
        *(["-c", credential] if credential else []),
        "bash",
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                _, writer = await asyncio.open_connection("127.0.0.1", port)
                writer.close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                await asyncio.sleep(0.05)
        yield f"ws://127.0.0.1:{port}/ws"
    finally:
        process.terminate()
        await process.wait()


@asynccontextmanager
async def stand_in() -> AsyncIterator[str]:
    async with fake_ttyd(CREDENTIAL) as fake:
        yield fake.url


SERVERS: dict[str, Callable[[], AbstractAsyncContextManager[str]]] = {"stand-in": stand_in, "real": real_ttyd}


@pytest.fixture(params=["stand-in", "real"])
async def ttyd_url(request: pytest.FixtureRequest) -> AsyncIterator[str]:
    if request.param == "real" and ttyd_binary() is None:
        pytest.skip(
            "no ttyd binary: set SYNAPSE_TTYD_BIN (CI sets it to ../shared/bin/ttyd) or put ttyd on PATH"
        )
    async with SERVERS[request.param]() as url:
        yield url


async def test_commands_stream_and_complete_through_ttyd(ttyd_url: str) -> None:
    shell = Shell(TtydTerminal(ttyd_url, CREDENTIAL))
    await shell.start()
    try:
        seen: list[tuple[float, str]] = []
        outcome = await shell.run(
            "echo hello && sleep 1 && echo done",
            total_seconds=10,
            idle_seconds=5,
            on_output=lambda chunk: seen.append((time.monotonic(), chunk.content)),
        )
        assert (outcome.output, outcome.exit_status) == ("hello\ndone\n", 0)
        assert seen[-1][0] - seen[0][0] >= 0.9, "hello came while the command ran"
        await shell.backend.resize(100, 30)
        size = await shell.run("stty size", total_seconds=10, idle_seconds=5)
        assert size.output == "30 100\n"
        failed = await shell.run("false", total_seconds=10, idle_seconds=5)
        assert failed.exit_status == 1
    finally:
        await shell.close()


async def test_a_refused_credential_is_an_authentication_failure_never_a_hang(ttyd_url: str) -> None:
    for credential in ("user:wrong", None):
        shell = Shell(TtydTerminal(ttyd_url, credential))
        with pytest.raises(TerminalAuthFailed, match="terminal authentication failed"):
            await asyncio.wait_for(shell.start(), 20)
        await shell.close()


async def test_a_wrong_token_after_the_right_basic_auth_is_refused_with_1008(ttyd_url: str) -> None:
    shell = Shell(_WrongToken(ttyd_url))
    with pytest.raises(TerminalAuthFailed, match="refused the token"):
        await asyncio.wait_for(shell.start(), 20)
    await shell.close()


class _WrongToken(TtydTerminal):
    """The right basic auth on the upgrade, a wrong `AuthToken` in the handshake."""

    def __init__(self, url: str) -> None:
        super().__init__(url, CREDENTIAL)

    def handshake_token(self) -> str:
        return "not-the-token"


async def test_a_connection_dropped_mid_command_is_terminal_lost() -> None:
    async with fake_ttyd(CREDENTIAL) as fake:
        shell = Shell(TtydTerminal(fake.url, CREDENTIAL))
        await shell.start()
        asyncio.get_running_loop().call_later(0.5, fake.drop)
        with pytest.raises(TerminalLost):
            await shell.run("sleep 5", total_seconds=10, idle_seconds=10)
        await shell.close()


async def test_the_tool_on_ttyd_reports_a_refused_credential_as_its_result(tmp_path: Path) -> None:
    async with fake_ttyd(CREDENTIAL) as fake:
        settings = Settings(
            data_dir=tmp_path,
            tools=ToolSettings(terminal_backend="ttyd", ttyd_url=fake.url, ttyd_credential="user:wrong"),
            _env_file=None,
        )
        tool = TerminalTool.from_settings(settings)
        refused = await tool.run(tool_run("ls", "tool_1"))
        assert not refused.ok and (refused.error or "").startswith("terminal authentication failed")
        right = settings.model_copy(
            update={"tools": settings.tools.model_copy(update={"ttyd_credential": CREDENTIAL})}
        )
        done = await TerminalTool.from_settings(right).run(tool_run("echo via ttyd", "tool_2"))
        assert done.ok and done.content["output"] == "via ttyd\n"


async def test_a_connection_dropped_between_commands_is_replaced_before_the_next(tmp_path: Path) -> None:
    async with fake_ttyd(CREDENTIAL) as fake:
        settings = Settings(
            data_dir=tmp_path,
            tools=ToolSettings(terminal_backend="ttyd", ttyd_url=fake.url, ttyd_credential=CREDENTIAL),
            _env_file=None,
        )
        tool = TerminalTool.from_settings(settings)
        first = await tool.run(tool_run("cd / && export MARK=kept && echo $MARK", "tool_1"))
        assert first.ok and first.content["output"] == "kept\n"
        fake.drop()
        [shell] = [
            terminal.shell for terminal in tool.runner.terminals
        ]  # to wait (bounded) until the client has seen the drop
        await assert_eventually(_ended(shell), bool, within=10, what="the drop seen by the client")
        second = await tool.run(tool_run("echo mark=$MARK", "tool_2"))
        assert second.ok and second.content["output"] == "mark=\n", "a new connection is a new shell"
        assert second.metadata["fresh_terminal"] is True and "reconnected" in second.metadata
        assert len(fake.connections) == 2


async def test_a_ttyd_that_comes_up_while_connecting_is_reached() -> None:
    port = free_port()
    shell = Shell(TtydTerminal(f"ws://127.0.0.1:{port}/ws", CREDENTIAL))
    starting = asyncio.create_task(shell.start())
    await asyncio.sleep(0)  # the first attempt is refused: nothing listens yet
    async with fake_ttyd(CREDENTIAL, port=port):
        await asyncio.wait_for(starting, 20)
        outcome = await shell.run("echo reached", total_seconds=10, idle_seconds=5)
        assert outcome.output == "reached\n"
        await shell.close()


def _ended(shell: Shell) -> Callable[[], Awaitable[bool]]:
    async def probe() -> bool:
        return shell.backend.ended

    return probe


async def test_a_reader_that_falls_behind_pauses_the_output_and_loses_nothing(ttyd_url: str) -> None:
    shell = Shell(TtydTerminal(ttyd_url, CREDENTIAL))
    await shell.start()
    backend = shell.backend
    assert isinstance(backend, TtydTerminal)
    await backend.send(b"seq 1 60000; printf '\\137\\137END\\n'\n")
    await assert_eventually(_paused(backend), bool, within=20, what="pause sent while nobody reads")
    output = bytearray()
    while b"__END" not in output:
        chunk = await asyncio.wait_for(backend.read(5), 10)
        output += chunk or b""
    lines = output.decode().replace("\r\n", "\n").split("__END")[0].split()
    assert lines == [str(n) for n in range(1, 60_001)], "every line, in order, after pause and resume"
    assert not backend.paused, "resumed once the backlog was read"
    await shell.close()


def _paused(backend: TtydTerminal) -> Callable[[], Awaitable[bool]]:
    async def probe() -> bool:
        return backend.paused

    return probe
