"""`synapse up` end to end: the real dev server, worker and API as subprocesses of `up`.

Each test starts `synapse up` on free ports with its own data dir, waits (bounded) until
`/healthz` answers 200 and `up` says it is ready, and then checks that every way of ending it
leaves no process behind. The graceful way, SIGTERM (`stop_with_sigterm`), ends the stack the
README's blocks run against (tests/readme/test_readme.py), so it has no `up` of its own here.
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from cli.up import banner
from core.tls import tls_context
from tests.conftest import assert_eventually

from ..support import free_ports
from .procs import alive, descendants, mentioning

READY_TIMEOUT = 120.0
"""Seconds `up` gets to be healthy: dev server start plus two cold Python imports on 2 cores."""
READY_LINE = banner("", 0)[0]
"""The first line of the banner `up` prints once a message would be processed at once."""
EXIT_TIMEOUT = 45.0
"""Seconds `up` gets to stop its children (each has 10 s before SIGKILL)."""


class Up:
    """One `synapse up` subprocess with its ports, data dir and output."""

    def __init__(self, tmp_path: Path) -> None:
        self.api_port, self.temporal_port, self.ui_port = free_ports(3)
        self.data_dir = tmp_path / "state"
        self.log_path = tmp_path / "up.log"
        env = {k: v for k, v in os.environ.items() if not k.startswith(("TEMPORAL_", "SYNAPSE_"))}
        argv = [
            sys.executable,
            "-m",
            "cli.main",
            "up",
            "--api-port",
            str(self.api_port),
            "--temporal-port",
            str(self.temporal_port),
            "--ui-port",
            str(self.ui_port),
            "--data-dir",
            str(self.data_dir),
        ]
        with self.log_path.open("wb") as log:
            self.process = subprocess.Popen(
                argv, cwd=tmp_path, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT
            )

    @property
    def output(self) -> str:
        """Everything `up` and its children printed so far."""
        return self.log_path.read_text(errors="replace")

    def announced_pids(self) -> dict[str, int]:
        """The child pids `up` printed: `Temporal dev server ready (pid N)` and so on."""
        pattern = r"^(Temporal dev server ready|worker started|API ready) \(pid (\d+)"
        return {name: int(pid) for name, pid in re.findall(pattern, self.output, re.MULTILINE)}

    async def wait_healthy(self) -> None:
        """Poll `/healthz` until it answers 200 (fails with `up`'s output after the bound)."""
        url = f"http://127.0.0.1:{self.api_port}/healthz"
        async with httpx.AsyncClient(timeout=5.0, verify=tls_context()) as http:

            async def probe() -> int:
                if self.process.poll() is not None:
                    raise AssertionError(
                        f"`synapse up` exited with {self.process.returncode}:\n{self.output}"
                    )
                return (await http.get(url)).status_code

            try:
                await assert_eventually(
                    probe, lambda code: code == 200, within=READY_TIMEOUT, what="GET /healthz 200"
                )
            except AssertionError as err:
                raise AssertionError(f"{err}\n--- synapse up output ---\n{self.output}") from None
        await assert_eventually(
            self._async_pids,
            lambda pids: len(pids) == 3,
            within=READY_TIMEOUT,
            what="`up` announcing its 3 children",
        )
        await assert_eventually(
            self._async_output,
            lambda out: READY_LINE in out,
            within=READY_TIMEOUT,
            what="`up` saying it is ready",
        )

    async def _async_output(self) -> str:
        return self.output

    async def _async_pids(self) -> dict[str, int]:
        return self.announced_pids()

    async def wait_exit(self) -> int:
        """Wait (bounded) for `up` to exit and return its exit code."""
        try:
            return await asyncio.to_thread(self.process.wait, EXIT_TIMEOUT)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"`synapse up` did not exit in {EXIT_TIMEOUT}s:\n{self.output}") from None

    def kill_everything(self) -> None:
        """Last-resort cleanup of this test's own processes, whatever the test left."""
        leftovers = descendants(self.process.pid) | mentioning(str(self.data_dir))
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        for pid in leftovers:
            if alive(pid):
                os.kill(pid, signal.SIGKILL)


@pytest.fixture
def up(tmp_path: Path) -> Iterator[Up]:
    """A started `synapse up` (not yet healthy); whatever remains is killed afterwards."""
    running = Up(tmp_path)
    try:
        yield running
    finally:
        running.kill_everything()


async def assert_all_gone(pids: set[int], up: Up) -> None:
    """Every pid in `pids`, and anything using the test's data dir, has exited (bounded wait)."""

    async def living() -> set[int]:
        return {pid for pid in pids if alive(pid)} | mentioning(str(up.data_dir))

    await assert_eventually(living, lambda left: not left, within=20, what="no process left behind")


async def assert_ready(up: Up) -> None:
    """`up` is healthy, said it was ready, and was: its API's `/readyz` answers 200."""
    await up.wait_healthy()
    async with httpx.AsyncClient(timeout=5.0, verify=tls_context()) as http:
        ready = await http.get(f"http://127.0.0.1:{up.api_port}/readyz")
    assert ready.status_code == 200, f"`up` said it was ready before the API was: {ready.text}"


async def stop_with_sigterm(up: Up) -> None:
    """SIGTERM, as Ctrl-C or a service manager stops it, stops every part: `up` exits 0 after
    saying so, and no process it started is left; it had said where everything is."""
    children = descendants(up.process.pid)
    announced = up.announced_pids()
    assert set(announced.values()) <= children, (announced, children)

    up.process.send_signal(signal.SIGTERM)
    code = await up.wait_exit()

    assert code == 0, up.output
    assert "stopping…" in up.output and up.output.rstrip().endswith("stopped")
    await assert_all_gone(children, up)
    assert (up.data_dir / "temporal.db").is_file(), "the dev server keeps its state in the data dir"
    out = up.output
    assert f"starting Temporal dev server on 127.0.0.1:{up.temporal_port}" in out
    for line in banner(f"http://127.0.0.1:{up.api_port}", up.ui_port):
        assert f"{line}\n" in out, (line, out)


# SIGTERM is checked on the README's stack (tests/readme/test_readme.py's `stack` ends with
# `assert_ready` and `stop_with_sigterm`): the reader's `up`, one `up` start fewer per run.


@pytest.mark.slow
async def test_a_dying_part_stops_the_others(up: Up) -> None:
    await up.wait_healthy()
    children = descendants(up.process.pid)
    worker = up.announced_pids()["worker started"]

    os.kill(worker, signal.SIGKILL)
    code = await up.wait_exit()

    assert code == 1, up.output
    assert "error: worker was killed by SIGKILL; stopping the others" in up.output
    await assert_all_gone(children, up)


@pytest.mark.slow
async def test_killing_up_itself_leaves_no_orphans(up: Up) -> None:
    await up.wait_healthy()
    children = descendants(up.process.pid)

    up.process.kill()  # SIGKILL: `up` cannot clean up; the children must notice on their own
    await up.wait_exit()

    await assert_all_gone(children, up)


@pytest.mark.slow
async def test_ctrl_c_with_a_client_following_stops_quietly(up: Up) -> None:
    """An open REPL follows its session's stream and reads the session every few seconds: its reads
    stay out of the log, and Ctrl-C tells its stream to reconnect instead of printing a traceback."""
    await up.wait_healthy()
    base = f"http://127.0.0.1:{up.api_port}"
    async with httpx.AsyncClient(base_url=base, timeout=30.0, verify=tls_context()) as http:
        sent = await http.post("/sessions/quiet/messages?wait=true", json={"content": "SELECT 1 AS n"})
        assert sent.status_code == 200, sent.text
        for _ in range(3):
            assert (await http.get("/sessions/quiet")).status_code == 200
        said: list[str] = []

        async def follow() -> None:
            async with http.stream("GET", "/sessions/quiet/events") as stream:
                async for line in stream.aiter_lines():
                    said.append(line)

        following = asyncio.ensure_future(follow())
        await assert_eventually(lambda: asyncio.sleep(0, said), bool, what="the stream open")
        up.process.send_signal(signal.SIGINT)
        assert await up.wait_exit() == 0, up.output
        await asyncio.wait_for(following, 10)

    out = up.output
    assert "event: reconnect" in said, said
    assert "Traceback" not in out and "Exception in ASGI application" not in out, out
    assert '"POST /sessions/quiet/messages?wait=true HTTP/1.1" 200' in out, "what changes something is logged"
    assert '"GET /sessions/quiet HTTP/1.1"' not in out and "GET /readyz" not in out, "polls are DEBUG"
