"""Shared fixtures: one real Temporal dev server per test session, polling helpers."""

from __future__ import annotations

import asyncio
import gc
import os
import sqlite3
import sys
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import httpx
import hypothesis
import pytest
from temporalio.api.enums.v1 import IndexedValueType
from temporalio.api.operatorservice.v1 import AddSearchAttributesRequest
from temporalio.client import Client
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.converter import DataConverter
from temporalio.testing import WorkflowEnvironment

from activities.tools.sql.database import SqlDatabase
from api.main import create_app
from core.artifacts import ArtifactStore, data_converter
from core.settings import LimitSettings, Settings, TemporalSettings
from worker import build_worker
from workflows.identity.search_attributes import SEARCH_ATTRIBUTES

from .fakes.s3 import CREDENTIALS, FakeBucket, s3_bucket
from .postgres import UNAVAILABLE, PostgresServer, shared_server, stop_shared
from .support import dev_server, serve, time_skipping_binary

hypothesis.settings.register_profile("synapse", deadline=None)
hypothesis.settings.load_profile("synapse")
"""No time limit per example: the suite runs beside others on two cores, and speed is measured by
the benchmarks (`bench/`), never asserted in a test."""

T = TypeVar("T")

pytest_plugins = ["tests.hangs"]

# Every test process holds the SDKs' 14,000 modules and their objects for its whole life. With
# Python's default thresholds the cyclic collector walks them over and over (about a tenth of the
# suite's own CPU); a larger first generation while collecting, and the survivors frozen once the
# tests are collected (`pytest_collection_finish`), spare that walk. It changes no test's outcome.
gc.set_threshold(50_000, 20, 100)


def pytest_collection_finish(session: pytest.Session) -> None:
    gc.collect()
    gc.freeze()


SLOW_SECONDS = 30.0
"""What a test marked `slow` without `seconds=` is taken to cost."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests marked `slow` first on every parallel worker, the longest spread out.

    xdist's `worksteal` hands each of the N workers one contiguous Nth of this order, and idle
    workers steal from the end of others' queues, never the front. So the order is N such
    segments (sized as xdist cuts them), each starting with its share of the slow tests (the
    longest first, each given to the segment with the fewest slow seconds yet), then the rest in
    their order. With the slow tests all at the very front, the first worker ran every one of
    them in turn, and a 4-minute test started 14 minutes into a CI run.
    """
    workers = max(int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")), 1)
    slow = sorted((i for i in items if i.get_closest_marker("slow")), key=_slow_seconds, reverse=True)
    rest = [i for i in items if not i.get_closest_marker("slow")]
    sizes, left = [], len(items)
    for n in range(workers):
        sizes.append(left // (workers - n))
        left -= sizes[-1]
    segments: list[list[pytest.Item]] = [[] for _ in range(workers)]
    load = [0.0] * workers
    for item in slow:
        room = [n for n in range(workers) if len(segments[n]) < sizes[n]]
        n = min(room, key=lambda n: load[n])
        segments[n].append(item)
        load[n] += _slow_seconds(item)
    for n, segment in enumerate(segments):
        while len(segment) < sizes[n]:
            segment.append(rest.pop(0))
    items[:] = [item for segment in segments for item in segment]


def _slow_seconds(item: pytest.Item) -> float:
    marker = item.get_closest_marker("slow")
    return float(marker.kwargs.get("seconds", SLOW_SECONDS)) if marker else 0.0


@pytest.fixture(scope="session", autouse=True)
def unraisable_deadlock_interrupts_are_dropped() -> Iterator[None]:
    """A workflow activation that runs past its worker's deadlock limit (`worker.DEADLOCK_SECONDS`;
    2 s for the plain workers some tests build) is interrupted by the Temporal SDK, which raises
    into its thread. Where the raise lands in a weakref callback, Python reports it as
    "unraisable" and pytest would fail whichever test was running. Those reports alone are
    dropped: the interrupted workflow itself is stuck on that worker for good, and the test that
    waits on it fails saying so (`tests/hangs.py` stops one that would hang)."""
    report = sys.unraisablehook

    def retried(unraisable: Any) -> None:
        if type(unraisable.exc_value).__name__ != "_InterruptDeadlockError":
            report(unraisable)

    sys.unraisablehook = retried
    yield
    sys.unraisablehook = report


@pytest.fixture(scope="session")
def converter(tmp_path_factory: pytest.TempPathFactory) -> DataConverter:
    """Synapse's data converter, its claim-check store shared by every client and worker of the run."""
    store = ArtifactStore.for_data_dir(tmp_path_factory.mktemp("claim-check"))
    return data_converter(store, threshold=LimitSettings().claim_check_bytes)


@pytest.fixture(scope="session")
async def temporal_env(converter: DataConverter) -> AsyncIterator[WorkflowEnvironment]:
    """A real dev server with Synapse's search attributes, shared by the whole session."""
    async with dev_server(converter) as env:
        yield env


@pytest.fixture(scope="session")
async def time_env() -> AsyncIterator[WorkflowEnvironment]:
    """The time-skipping test server, for durable timers (shared by the session)."""
    env = await WorkflowEnvironment.start_time_skipping(
        test_server_existing_path=time_skipping_binary(),
        data_converter=pydantic_data_converter,
    )
    kinds = {
        "KEYWORD": IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
        "INT": IndexedValueType.INDEXED_VALUE_TYPE_INT,
    }
    await env.client.operator_service.add_search_attributes(
        AddSearchAttributesRequest(
            namespace=env.client.namespace,
            search_attributes={key.name: kinds[key.indexed_value_type.name] for key in SEARCH_ATTRIBUTES},
        )
    )
    try:
        yield env
    finally:
        await env.shutdown()


@pytest.fixture
def client(temporal_env: WorkflowEnvironment) -> Client:
    """Client of the shared dev server (Synapse's data converter)."""
    return temporal_env.client


@pytest.fixture
def task_queue() -> str:
    """A fresh task queue per test, so tests never steal each other's tasks."""
    return f"tq-{uuid.uuid4().hex[:12]}"


async def assert_eventually(
    probe: Callable[[], Awaitable[T]],
    check: Callable[[T], bool],
    *,
    within: float = 30.0,
    interval: float = 0.05,
    what: str = "condition",
) -> T:
    """Poll `probe` until `check(value)` holds, or fail after `within` seconds."""
    deadline = time.monotonic() + within
    last: T | None = None
    last_error: Exception | None = None
    while time.monotonic() < deadline:
        try:
            last = await probe()
            if check(last):
                return last
            last_error = None
        except Exception as err:  # the probe may fail until the state exists
            last_error = err
        await asyncio.sleep(interval)
    raise AssertionError(f"{what} not reached in {within}s; last value {last!r}, error {last_error!r}")


async def assert_progressing(
    probe: Callable[[], Awaitable[T]],
    done: Callable[[T], int],
    goal: int,
    *,
    stall: float = 60.0,
    interval: float = 0.5,
    what: str = "work",
) -> T:
    """Poll `probe` until `done(value)` reaches `goal`; fail when it has not moved for `stall` seconds.

    For long work whose pace follows the machine's load (a thousand turns): a hang fails within
    `stall`, a slow but steady run finishes.
    """
    moved_at, best = time.monotonic(), -1
    while True:
        value = await probe()
        count = done(value)
        if count >= goal:
            return value
        if count > best:
            moved_at, best = time.monotonic(), count
        elif time.monotonic() - moved_at > stall:
            raise AssertionError(f"{what}: stuck at {count} of {goal} for {stall}s; last value {value!r}")
        await asyncio.sleep(interval)


@pytest.fixture
def settings(tmp_path: Path, task_queue: str) -> Settings:
    """Settings of one test: its own data dir (demo DB) and task queue."""
    return Settings(data_dir=tmp_path, temporal=TemporalSettings(task_queue=task_queue), _env_file=None)


@pytest.fixture
async def worker(client: Client, settings: Settings) -> AsyncIterator[None]:
    """A real worker with every workflow and activity, for the test's task queue."""
    async with build_worker(client, settings):
        yield


@pytest.fixture
async def http(client: Client, settings: Settings, worker: None) -> AsyncIterator[httpx.AsyncClient]:
    """An HTTP client talking to the real app served by uvicorn on loopback."""
    async with serve(create_app(settings, client=client)) as http_client:
        yield http_client


@pytest.fixture
def count_orders(settings: Settings) -> Callable[[str], int]:
    """Count demo `orders` rows matching a WHERE clause, straight from SQLite."""

    SqlDatabase(settings.demo_db_url).run("SELECT 1")  # creates and seeds the demo DB

    def count(where: str = "1=1") -> int:
        with sqlite3.connect(settings.data_dir / "demo.db") as db:
            value: int = db.execute(f"SELECT COUNT(*) FROM orders WHERE {where}").fetchone()[0]
            return value

    return count


@pytest.fixture
def s3(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeBucket]:
    """A loopback S3 (tests/fakes/s3.py) with one new bucket, and boto3's credentials in the env."""
    for name, value in CREDENTIALS.items():
        monkeypatch.setenv(name, value)
    with s3_bucket() as bucket:
        yield bucket


def _run_dir(config: pytest.Config) -> Path:
    """A directory every process of this test run shares: the controller's base temp directory (an
    xdist worker's is a subdirectory of it)."""
    base: Path = config._tmp_path_factory.getbasetemp()  # type: ignore[attr-defined]
    return (base.parent if hasattr(config, "workerinput") else base) / "postgres"


@pytest.fixture(scope="session")
def postgres(pytestconfig: pytest.Config) -> PostgresServer:
    """The run's real PostgreSQL server (tests/postgres.py), shared by every xdist worker; skipped,
    saying why, where PostgreSQL is not installed."""
    if UNAVAILABLE is not None:
        pytest.skip(UNAVAILABLE)
    return shared_server(_run_dir(pytestconfig))


@pytest.fixture
def postgres_url(postgres: PostgresServer) -> str:
    """SQLAlchemy URL of a new, empty PostgreSQL database of the test's own."""
    return postgres.new_database()


def pytest_sessionfinish(session: pytest.Session) -> None:
    """The controlling process stops the run's PostgreSQL server once every worker is done."""
    if not hasattr(session.config, "workerinput"):
        stop_shared(_run_dir(session.config))
