"""Fixtures for end-to-end tests: a real worker and the real app on a real uvicorn server."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import httpx
import pytest
from temporalio.client import Client

from activities.sql_tool import SqlTool
from api.main import create_app
from cli.settings import Settings
from worker import build_worker

from ..support import serve


@pytest.fixture
def settings(tmp_path: Path, task_queue: str) -> Settings:
    """Settings of one test: its own data dir (demo DB) and task queue."""
    return Settings(data_dir=tmp_path, task_queue=task_queue, _env_file=None)  # type: ignore[call-arg]


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

    SqlTool(settings.demo_db_url).run("SELECT 1")  # creates and seeds the demo DB

    def count(where: str = "1=1") -> int:
        with sqlite3.connect(settings.data_dir / "demo.db") as db:
            value: int = db.execute(f"SELECT COUNT(*) FROM orders WHERE {where}").fetchone()[0]
            return value

    return count
