"""`synapse worker` and `synapse api`: run one part of Synapse alone, against any Temporal."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from typing import Any

from core.connect import ConnectError
from core.logs import configure_logging
from core.settings import Settings

SHUTDOWN_GRACE = 8.0
"""Seconds a stopping worker gets before it exits anyway.

A worker whose Temporal server disappeared at the same moment (both stopped together) would
otherwise wait for its pollers forever.
"""

API_STREAMS_GRACE = 3
"""Seconds a stopping API gives open requests (event streams included) before closing them."""


async def _run_worker_until_stopped(settings: Settings) -> None:
    """Run the worker; SIGTERM stops it as gracefully as Ctrl-C does, a second signal at once."""
    from worker import run_worker  # imported here: it loads every workflow and activity

    task = asyncio.ensure_future(run_worker(settings))
    loop = asyncio.get_running_loop()

    def stop() -> None:
        if task.cancelling():
            _give_up("a second stop signal")
        task.cancel()
        loop.call_later(SHUTDOWN_GRACE, _give_up, f"no clean shutdown within {SHUTDOWN_GRACE:.0f}s")

    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop)
    with contextlib.suppress(asyncio.CancelledError):
        await task


def _give_up(why: str) -> None:
    """Leave the process now, without waiting for the worker's pollers."""
    print(f"worker: exiting after {why}", file=sys.stderr, flush=True)
    os._exit(1)


def worker(settings: Settings) -> int:
    """`synapse worker`: poll `settings.temporal.task_queue` until Ctrl-C or SIGTERM.

    Returns:
        The exit code: 0 after a requested stop, 1 when Temporal cannot be reached.
    """
    configure_logging(settings)
    try:
        asyncio.run(_run_worker_until_stopped(settings))
    except ConnectError as err:
        print(err, file=sys.stderr)
        return 1
    return 0


def api(settings: Settings) -> int:
    """`synapse api`: serve the HTTP API with uvicorn on `settings.api.host:settings.api.port`.

    The app factory reads its settings from the environment, so the `--host`/`--port` flags
    only decide where uvicorn listens. A stop signal first ends every open event stream the way
    the API's stream hub ends them (a `reconnect` event; an AG-UI run's `RUN_ERROR`
    `stream_ended`), then uvicorn gives what is still open `API_STREAMS_GRACE` seconds.

    Returns:
        The exit code (0 after Ctrl-C or SIGTERM).
    """
    import uvicorn

    configure_logging(settings)

    config = uvicorn.Config(
        "api.main:create_app",
        factory=True,
        host=settings.api.host,
        port=settings.api.port,
        # Open requests get this long to end once the event streams were told to reconnect.
        timeout_graceful_shutdown=API_STREAMS_GRACE,
        # JSON lines: uvicorn's own lines (access log included) go through the root handler too.
        log_config=None if settings.log_format == "json" else uvicorn.config.LOGGING_CONFIG,
    )
    _streams_first(config).run()
    return 0


def _streams_first(config: Any) -> Any:
    """A uvicorn server that, when it stops, first ends the open event streams.

    They never end by themselves: uvicorn would wait out its grace period and then cancel them,
    printing a traceback per stream ("Exception in ASGI application"). Told to reconnect instead
    (the hub's close: clients resume with Last-Event-ID on the next API process), they end at once.
    """
    import uvicorn

    class StreamsFirst(uvicorn.Server):
        async def shutdown(self, sockets: Any = None) -> None:
            hub = _hub_of(self.config.loaded_app)
            if hub is not None:
                await hub.close()
            await super().shutdown(sockets)

    return StreamsFirst(config)


def _hub_of(app: Any) -> Any:
    """The SSE hub of the Synapse app inside uvicorn's middleware wrappers (None before startup)."""
    while app is not None:
        hub = getattr(getattr(app, "state", None), "hub", None)
        if hub is not None:
            return hub
        app = getattr(app, "app", None)
    return None
