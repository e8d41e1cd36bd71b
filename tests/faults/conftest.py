"""Fixtures of the fault tests: owned child processes, the API without a worker, the demo DB."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest
from temporalio.client import Client

from activities.tools.sql.database import SqlDatabase
from api.main import create_app
from core.settings import Settings

from ..support import serve
from .processes import Children


@pytest.fixture
def children(tmp_path: Path) -> Iterator[Children]:
    """Processes the test starts; every one is SIGKILLed afterwards, pass or fail."""
    group = Children(tmp_path)
    try:
        yield group
    finally:
        group.kill_all()


@pytest.fixture
async def api(client: Client, settings: Settings) -> AsyncIterator[httpx.AsyncClient]:
    """The real app on uvicorn, with no worker in this process (workers are separate processes)."""
    async with serve(create_app(settings, client=client)) as http:
        yield http


class DemoDb:
    """Reads the `sql` tool's demo database straight from SQLite, as an operator would."""

    def __init__(self, settings: Settings) -> None:
        self.path = settings.data_dir / "demo.db"
        SqlDatabase(settings.demo_db_url).prepare()  # creates and seeds it before any worker runs

    def scalar(self, sql: str, *args: object) -> object:
        """The first column of the first row of `sql`."""
        with sqlite3.connect(self.path, timeout=10) as db:
            row = db.execute(sql, args).fetchone()
            return None if row is None else row[0]

    def amount(self, order_id: int) -> float:
        """`orders.amount` of one order."""
        value = self.scalar("SELECT amount FROM orders WHERE id = ?", order_id)
        assert isinstance(value, float), f"order {order_id} has no amount: {value!r}"
        return value

    def count(self, where: str = "1=1") -> int:
        """Rows of `orders` matching `where`."""
        value = self.scalar(f"SELECT COUNT(*) FROM orders WHERE {where}")
        assert isinstance(value, int)
        return value


@pytest.fixture
def demo_db(settings: Settings) -> DemoDb:
    """This test's demo database, created and seeded."""
    return DemoDb(settings)
