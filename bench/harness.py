"""The benchmark rig: one dev server for the run; per benchmark a Synapse stack and a bare worker.

Everything but the dev server runs in this process: Synapse's worker, the API on a real
uvicorn server on 127.0.0.1 (reached with a real httpx client, and for the requests that are
timed with plain HTTP/1.1, `plain.py`), the bare worker and the benchmark's own Temporal client.
Each benchmark gets fresh task queues and fresh workers, so one benchmark's workflow cache does
not carry into the next. Synapse's worker and API use Synapse's data converter, as `synapse worker`
and `synapse api` do (`core.connect.synapse_converter`: the process's shared type adapters, the
claim check); the bare worker and the benchmark's own calls use the SDK's pydantic converter, as a
bare Temporal application would. Both clients share one connection.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import socket
import time
import uuid
from collections.abc import AsyncIterator, Generator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import uvicorn
from temporalio.client import Client, WorkflowHandle
from temporalio.worker import Worker

from activities.tools.runner import ToolActivities
from api.main import create_app
from core.client import SynapseClient
from core.connect import synapse_converter
from core.settings import Settings
from worker import SynapseWorker, build_worker
from workflows.identity.ids import session_workflow_id

from . import bare
from .devserver import DevServer, dev_server
from .plain import PlainHttp
from .stats import progress

SHUTDOWN_WITHIN = 15.0
"""Seconds any one part may take to stop."""
CONNECTIONS = 200
"""HTTP connections the benchmark client may open (SSE watchers hold one each)."""
KEEP_ALIVE = 600
"""Seconds uvicorn keeps an idle HTTP connection open."""


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def rss_mb(pid: int | str = "self") -> float:
    """Resident set size of a process (VmRSS), in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def cpu_seconds(pid: int | None = None) -> float:
    """CPU time (user + system) used so far by this process, or by process `pid`."""
    if pid is None:
        return time.process_time()
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class _Uvicorn(uvicorn.Server):
    """uvicorn without its signal capture, so Ctrl-C reaches asyncio and every part stops in order."""

    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        yield


@dataclass
class Stack:
    """One benchmark's parts: the Synapse API + worker, and a bare worker on its own queue."""

    client: Client
    """The benchmark's own client (the SDK's pydantic converter): bare workflows."""
    synapse_client: Client
    """The client Synapse's worker and API run on (Synapse's data converter): its workflows."""
    synapse: SynapseClient
    plain: PlainHttp
    """The same API for the requests the benchmark times (`plain.py`)."""
    settings: Settings
    bare_queue: str
    ids: itertools.count[int]
    cache: int | None = None
    """The bare workers' workflow cache (None: the SDK's 1,000)."""

    def session(self, key: str) -> WorkflowHandle[Any, Any]:
        """Handle of a Synapse session."""
        return self.synapse_client.get_workflow_handle(session_workflow_id(key))

    @contextlib.asynccontextmanager
    async def another_bare_worker(self) -> AsyncIterator[str]:
        """One more bare worker, on a queue of its own (so with a workflow cache of its own), while
        the context lasts; yields its queue."""
        queue = f"{self.bare_queue}-{uuid.uuid4().hex[:6]}"
        async with _stopping(_bare_worker(self.client, queue, self.cache)):
            yield queue

    def key(self, prefix: str) -> str:
        """A fresh session key / workflow id suffix."""
        return f"{prefix}-{uuid.uuid4().hex[:10]}"

    def destructive_sql(self) -> str:
        """An INSERT with a fresh id: needs approval, affects exactly one row when applied."""
        return f"INSERT INTO orders (id, customer, amount, status) VALUES ({next(self.ids)}, 'bench', 1.0, 'pending')"


class Harness:
    """The dev server and client shared by every benchmark of the run."""

    def __init__(self, server: DevServer, data_dir: Path, cache: int | None = None) -> None:
        self.server_pid = server.pid
        self.client = server.client
        self.data_dir = data_dir
        self.cache = cache
        """Workflows each worker keeps in its cache (`--cache`); None: the environment's
        `SYNAPSE_CACHED_WORKFLOWS` for Synapse's worker, the SDK's 1,000 for the bare ones."""
        self._ids = itertools.count(100_000)

    @classmethod
    @contextlib.asynccontextmanager
    async def start(cls, data_dir: Path, cache: int | None = None) -> AsyncIterator[Harness]:
        """Start the in-memory dev server with Synapse's search attributes; stop it at the end.
        `cache`: every worker's workflow cache (Synapse's and the bare ones alike)."""
        async with dev_server(free_port(), data_dir / "temporal.log") as server:
            progress(f"dev server up on {server.address} (in memory, pid {server.pid})")
            try:
                yield cls(server, data_dir, cache)
            finally:
                progress("stopping the dev server")

    @contextlib.asynccontextmanager
    async def stack(self, name: str) -> AsyncIterator[Stack]:
        """Synapse worker + API (uvicorn on a free loopback port) + bare worker, for one benchmark."""
        suffix = uuid.uuid4().hex[:8]
        # The worker tuning of the environment applies (SYNAPSE_WORKFLOW_SLOTS, ..._POLLERS, ...).
        tuned = Settings(_env_file=None).temporal
        update: dict[str, Any] = {"task_queue": f"bench-{name}-{suffix}"}
        if self.cache is not None:
            update["cached_workflows"] = self.cache
        settings = Settings(data_dir=self.data_dir, temporal=tuned.model_copy(update=update), _env_file=None)
        tools = ToolActivities(settings)
        await asyncio.to_thread(tools.prepare)
        bare_queue = f"bare-{name}-{suffix}"
        config = self.client.config()  # its connection, interceptors and the rest, with Synapse's converter
        config["data_converter"] = synapse_converter(settings)
        synapse_client = Client(**config)
        synapse_worker = build_worker(synapse_client, settings, tools=tools)
        async with contextlib.AsyncExitStack() as parts:
            parts.push_async_callback(tools.close)
            await parts.enter_async_context(_stopping(synapse_worker))
            await parts.enter_async_context(_stopping(_bare_worker(self.client, bare_queue, self.cache)))
            synapse = await parts.enter_async_context(_serve(create_app(settings, client=synapse_client)))
            plain = PlainHttp(str(synapse.http.base_url))
            parts.push_async_callback(plain.close)
            yield Stack(
                self.client, synapse_client, synapse, plain, settings, bare_queue, self._ids, self.cache
            )


def _bare_worker(client: Client, task_queue: str, cache: int | None = None) -> Worker:
    """A worker of the bare shapes; `cache`: its workflow cache (the SDK's 1,000 when None)."""
    return Worker(
        client,
        task_queue=task_queue,
        workflows=list(bare.WORKFLOWS),
        activities=list(bare.ACTIVITIES),
        max_cached_workflows=1000 if cache is None else cache,
    )


@contextlib.asynccontextmanager
async def _stopping(worker: Worker | SynapseWorker) -> AsyncIterator[None]:
    """Run a worker; stop it within SHUTDOWN_WITHIN seconds."""
    task = asyncio.create_task(worker.run())
    try:
        yield
    finally:
        with contextlib.suppress(Exception, asyncio.CancelledError):
            async with asyncio.timeout(SHUTDOWN_WITHIN):
                await worker.shutdown()
        if not task.done():
            task.cancel()
        with contextlib.suppress(BaseException):
            await task


@contextlib.asynccontextmanager
async def _serve(app: Any) -> AsyncIterator[SynapseClient]:
    """Serve `app` with uvicorn on 127.0.0.1; yield a client of it."""
    port = free_port()
    # Keep idle connections longer than any pause between phases: with uvicorn's 5 s default, a
    # request can race the server closing the pooled connection it was sent on (httpx.ReadError).
    config = uvicorn.Config(
        app,
        host="127.0.0.1",
        port=port,
        log_level="warning",
        timeout_graceful_shutdown=1,
        timeout_keep_alive=KEEP_ALIVE,
    )
    server = _Uvicorn(config)
    task = asyncio.create_task(server.serve())
    async with asyncio.timeout(15):
        while not server.started:
            if task.done():
                task.result()
            await asyncio.sleep(0.01)
    try:
        async with SynapseClient(f"http://127.0.0.1:{port}", max_connections=CONNECTIONS) as synapse:
            yield synapse
    finally:
        server.should_exit = True
        with contextlib.suppress(BaseException):
            async with asyncio.timeout(SHUTDOWN_WITHIN):
                await task
        if not task.done():
            task.cancel()
