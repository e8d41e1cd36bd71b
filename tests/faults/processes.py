"""Real processes for fault tests: a worker you can SIGKILL, a dev server you can restart.

Every child runs in its own process group (so killing it kills everything it started), writes
its output to a log file the test can read, and is owned by a `Children` group whose
`kill_all()` the fixtures call in `finally`, so nothing outlives a failing test.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

import httpx
from temporalio.api.enums.v1 import TaskQueueType
from temporalio.api.taskqueue.v1 import TaskQueue
from temporalio.api.workflowservice.v1 import DescribeTaskQueueRequest
from temporalio.client import Client
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.converter import DataConverter

from core.settings import Settings
from workflows.identity.search_attributes import dev_server_flags

from ..conftest import assert_eventually
from ..support import free_port, temporal_binary

WORKER_READY_WITHIN = 60.0
"""Seconds a worker process gets to poll its task queue (cold imports on 2 busy cores)."""
API_READY_WITHIN = 60.0
"""Seconds an API process gets to answer `/readyz` (cold imports on 2 busy cores)."""
SERVER_READY_WITHIN = 30.0
"""Seconds a dev server gets to answer a client."""
EXIT_WITHIN = 20.0
"""Seconds a signalled process gets to exit."""


class Child:
    """One subprocess in its own process group, its stdout and stderr in `log_path`."""

    def __init__(self, name: str, argv: Sequence[str], env: Mapping[str, str], log_path: Path) -> None:
        self.name = name
        self.log_path = log_path
        with log_path.open("ab") as log:
            self.popen = subprocess.Popen(
                list(argv),
                cwd=log_path.parent,
                env=dict(env),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    @property
    def pid(self) -> int:
        """The process id (also its process group id)."""
        return self.popen.pid

    def output(self) -> str:
        """Everything the process printed so far."""
        return self.log_path.read_text(errors="replace")

    def check_running(self) -> None:
        """Fail the test, showing the output, when the process has exited."""
        code = self.popen.poll()
        if code is not None:
            raise AssertionError(f"{self.name} exited with {code}:\n{self.output()}")

    async def wait_for_output(self, text: str, *, within: float) -> None:
        """Wait (bounded) until the process printed `text`."""

        async def printed() -> bool:
            self.check_running()
            return text in self.output()

        try:
            await assert_eventually(printed, bool, within=within, what=f"{self.name} printing {text!r}")
        except AssertionError as err:
            raise AssertionError(f"{err}\n--- {self.name} output ---\n{self.output()}") from None

    def _signal_group(self, sig: signal.Signals) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.popen.pid, sig)

    async def wait_exit(self, *, within: float = EXIT_WITHIN) -> int:
        """Wait (bounded) for the process to exit; its exit code."""
        try:
            return await asyncio.to_thread(self.popen.wait, within)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"{self.name} did not exit within {within}s:\n{self.output()}") from None

    async def kill(self) -> None:
        """SIGKILL the whole process group, as a crash or the OOM killer would, and reap it."""
        self._signal_group(signal.SIGKILL)
        await self.wait_exit()

    async def terminate(self, *, within: float = EXIT_WITHIN) -> int:
        """SIGTERM the process group and wait (bounded) for a clean exit; its exit code."""
        self._signal_group(signal.SIGTERM)
        return await self.wait_exit(within=within)

    def kill_now(self) -> None:
        """Cleanup: SIGKILL the group whatever its state, and reap the process."""
        self._signal_group(signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.popen.wait(EXIT_WITHIN)


class Children:
    """The processes one test started; `kill_all()` ends every one of them."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.started: list[Child] = []

    def start(self, name: str, argv: Sequence[str], env: Mapping[str, str]) -> Child:
        """Start `argv` with its output in `<directory>/<name>-<n>.log`."""
        log_path = self.directory / f"{name}-{len(self.started)}.log"
        child = Child(name, argv, env, log_path)
        self.started.append(child)
        return child

    def kill_all(self) -> None:
        """SIGKILL every process group this test started (running or not)."""
        for child in self.started:
            child.kill_now()


def worker_env(target_host: str, settings: Settings, **extra: str) -> dict[str, str]:
    """Environment of a `synapse worker` process for this test's server, queue, data dir and stores.

    Every inherited `TEMPORAL_*`/`SYNAPSE_*` variable is dropped and the Temporal config file is
    disabled, so nothing but the test's own server can be reached.
    """
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TEMPORAL_", "SYNAPSE_"))}
    env.update(
        TEMPORAL_ADDRESS=target_host,
        TEMPORAL_NAMESPACE="default",
        TEMPORAL_CONFIG_FILE=os.devnull,
        PYTHONUNBUFFERED="1",
        SYNAPSE_TASK_QUEUE=settings.temporal.task_queue,
        SYNAPSE_DATA_DIR=str(settings.data_dir.resolve()),
    )
    shared = {
        "SYNAPSE_SQL_URL": settings.tools.sql_url,
        "SYNAPSE_RULES_URL": settings.rules_url,
        "SYNAPSE_EXPERIENCE_URL": settings.experience_url,
    }
    env.update({name: url for name, url in shared.items() if url is not None})
    env.update(extra)
    return env


async def start_worker(children: Children, client: Client, settings: Settings, **extra_env: str) -> Child:
    """Start `synapse worker` as a separate process and wait (bounded) until it polls."""
    argv = [sys.executable, "-m", "cli.main", "worker"]
    env = worker_env(client.service_client.config.target_host, settings, **extra_env)
    worker = children.start("worker", argv, env)
    await wait_polling(client, settings.temporal.task_queue, worker)
    return worker


async def start_api(
    children: Children, client: Client, settings: Settings, **extra_env: str
) -> tuple[Child, str]:
    """`synapse api` as a process of its own on a free loopback port, for this test's server and
    queue (`extra_env` added, e.g. `SYNAPSE_API_KEYS`); its base URL once `/readyz` answers 200."""
    port = free_port()
    env = worker_env(client.service_client.config.target_host, settings, **extra_env)
    api = children.start("api", [sys.executable, "-m", "cli.main", "api", "--port", str(port)], env)
    url = f"http://127.0.0.1:{port}"

    async def ready() -> int:
        api.check_running()
        try:
            async with httpx.AsyncClient(timeout=5) as http:
                return (await http.get(f"{url}/readyz")).status_code
        except httpx.TransportError:
            return 0

    await assert_eventually(
        ready, lambda code: code == 200, within=API_READY_WITHIN, interval=0.2, what=f"api {url} ready"
    )
    return api, url


async def wait_polling(client: Client, task_queue: str, worker: Child) -> None:
    """Wait until the server lists `worker` (by its pid-based identity) as a poller of the queue.

    A killed worker stays in the poller list for a while, so any poller would not do.
    """
    request = DescribeTaskQueueRequest(
        namespace=client.namespace,
        task_queue=TaskQueue(name=task_queue),
        task_queue_type=TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
    )

    async def pollers() -> list[str]:
        worker.check_running()
        response = await client.workflow_service.describe_task_queue(request)
        return [poller.identity for poller in response.pollers]

    identity = f"{worker.pid}@"
    try:
        await assert_eventually(
            pollers,
            lambda found: any(name.startswith(identity) for name in found),
            within=WORKER_READY_WITHIN,
            interval=0.2,
            what=f"worker pid {worker.pid} polling {task_queue!r}",
        )
    except AssertionError as err:
        raise AssertionError(f"{err}\n--- worker output ---\n{worker.output()}") from None


class DevServer:
    """A `temporal server start-dev` of this test alone, persisting to one SQLite file."""

    def __init__(self, children: Children, db_file: Path) -> None:
        self.children = children
        self.db_file = db_file
        self.port = free_port()
        self.process: Child | None = None

    @property
    def target_host(self) -> str:
        """Its gRPC address."""
        return f"127.0.0.1:{self.port}"

    def argv(self) -> list[str]:
        """The command line: loopback only, no Web UI, state in `db_file`."""
        return [
            temporal_binary(),
            "server",
            "start-dev",
            "--ip",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--headless",
            "--db-filename",
            str(self.db_file),
            "--namespace",
            "default",
            "--log-level",
            "error",
            *dev_server_flags(),
        ]

    async def start(self, data_converter: DataConverter = pydantic_data_converter) -> Client:
        """Start the server (same port and file every time) and connect a client to it."""
        assert self.process is None or self.process.popen.poll() is not None, "already running"
        env = {k: v for k, v in os.environ.items() if not k.startswith("TEMPORAL_")}
        self.process = self.children.start("temporal", self.argv(), env)
        process = self.process

        async def connect() -> Client:
            process.check_running()
            async with asyncio.timeout(5):
                return await Client.connect(
                    self.target_host, namespace="default", data_converter=data_converter
                )

        return await assert_eventually(
            connect, lambda _client: True, within=SERVER_READY_WITHIN, interval=0.2, what="dev server up"
        )

    async def stop(self) -> int:
        """SIGTERM the server and wait (bounded) for it to exit; its exit code."""
        assert self.process is not None, "not started"
        return await self.process.terminate()
