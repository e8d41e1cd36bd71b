"""A test that hangs names itself and stops, instead of holding the whole run until CI gives up.

Every test is bounded by `hang_timeout` (its setup, call and teardown, so the session's teardown
counts against the last test of each worker; pytest's own `faulthandler_timeout` and
pytest-timeout stop counting when a test fails, and a failed test's hung teardown is the usual
hang). When time is up, this plugin writes where every thread and every asyncio task of the
worker is waiting to a file under the pytest cache and ends the worker; xdist reports the test
as failed ("worker crashed"), starts a new worker and the run goes on. At the end the run
prints those files, so CI's log says what hung and where.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import io
import os
import sys
import threading
import traceback
import types
from collections.abc import Iterator
from pathlib import Path

import pytest

HANGS_DIR = "hangs"
"""Under the pytest cache (shared by the xdist workers and the main process)."""

_loops: list[asyncio.AbstractEventLoop] = []


def _directory(config: pytest.Config) -> Path | None:
    """Where reports are written (none without pytest's cache: then only to stderr)."""
    cache = getattr(config, "cache", None)  # absent with `-p no:cacheprovider`
    return None if cache is None else Path(cache.mkdir(HANGS_DIR))


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addini("hang_timeout", "seconds a test (setup, call, teardown) may take before it is stopped")


def pytest_configure(config: pytest.Config) -> None:
    directory = _directory(config)
    if directory is not None and not hasattr(config, "workerinput"):  # the main process
        for stale in directory.glob("*.txt"):
            stale.unlink()


@pytest.fixture(scope="session", autouse=True)
async def _hang_report_loop() -> None:
    """Remembers the session's event loop, whose tasks a report lists."""
    _loops.append(asyncio.get_running_loop())


def where_everything_waits() -> str:
    out = io.StringIO()
    frames = sys._current_frames()
    for thread in threading.enumerate():
        frame = frames.get(thread.ident or -1)
        if frame is not None:
            out.write(f"\n--- thread {thread.name}\n")
            out.write("".join(traceback.format_stack(frame)))
    for loop in _loops:
        try:
            tasks = asyncio.all_tasks(loop)
        except RuntimeError as error:  # the set changed under us too often
            out.write(f"\n--- asyncio tasks not listed: {error}\n")
            continue
        for task in tasks:
            out.write(f"\n--- task {task.get_name()}\n")
            out.write("".join(traceback.format_list(_awaiting(task.get_coro()))))
    # A task awaiting an async generator (a fixture's teardown) shows only the `__anext__`: the
    # generators themselves say where they wait.
    for generator in gc.get_objects():
        if isinstance(generator, types.AsyncGeneratorType) and generator.ag_await is not None:
            out.write(f"\n--- async generator {generator.__qualname__}\n")
            out.write("".join(traceback.format_list(_awaiting(generator))))
    return out.getvalue()


def _awaiting(coro: object) -> list[traceback.FrameSummary]:
    """The chain of awaits a coroutine is suspended in, outermost first (a task's own stack shows
    only its outermost frame)."""
    chain: list[traceback.FrameSummary] = []
    while coro is not None and len(chain) < 50:
        frame = next(
            (getattr(coro, a) for a in ("cr_frame", "gi_frame", "ag_frame") if hasattr(coro, a)), None
        )
        if frame is None:
            break
        chain.append(traceback.FrameSummary(frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name))
        coro = next(
            (getattr(coro, a) for a in ("cr_await", "gi_yieldfrom", "ag_await") if hasattr(coro, a)), None
        )
    return chain


@contextlib.contextmanager
def bounded(config: pytest.Config, what: str) -> Iterator[None]:
    """Runs the block; past `hang_timeout` seconds, reports where everything waits and ends the
    process (never cancelled by a failure: a hang in a failed test's teardown counts too)."""
    seconds = float(config.getini("hang_timeout") or 0)
    if seconds <= 0:
        yield
        return
    directory = _directory(config)
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")

    def give_up() -> None:
        report = f"{what} still running after {seconds:g} s (worker {worker}):\n{where_everything_waits()}"
        if directory is not None:
            (directory / f"{worker}-{os.getpid()}.txt").write_text(report)
        capture = config.pluginmanager.getplugin("capturemanager")
        if capture is not None:  # to the real stderr, not the test's captured output
            capture.suspend_global_capture(in_=False)
        sys.stderr.write(report)
        sys.stderr.flush()
        _kill_children()  # the worker's dev server, shells, ...: nothing outlives it
        os._exit(1)

    timer = threading.Timer(seconds, give_up)
    timer.name, timer.daemon = "hang report", True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()


def _kill_children() -> None:
    me = str(os.getpid())
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, IndexError, ValueError):
            fields = stat.read_text().rsplit(")", 1)[1].split()
            if fields[1] == me:  # its parent
                os.kill(int(stat.parent.name), 9)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Iterator[None]:
    with bounded(item.config, item.nodeid):
        yield


@pytest.hookimpl(hookwrapper=True)
def pytest_sessionfinish(session: pytest.Session) -> Iterator[None]:
    """The session's fixtures end here when a run stops early (`-x`)."""
    with bounded(session.config, "the session's teardown"):
        yield


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    directory = _directory(config)
    for report in sorted(directory.glob("*.txt") if directory else []):
        terminalreporter.section(f"hung: {report.name}", sep="!")
        terminalreporter.write(report.read_text())
