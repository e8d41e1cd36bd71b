"""Fixtures of the fault tests: owned child processes, the API without a worker, the demo DB."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest
from sqlalchemy import text
from temporalio.client import Client

from activities.tools.sql.database import SqlDatabase
from api.main import create_app
from core.database import engine_for
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
    """Reads the `sql` tool's database (SQLite or PostgreSQL) straight, as an operator would."""

    def __init__(self, settings: Settings) -> None:
        demo = SqlDatabase(settings.demo_db_url)
        demo.prepare()  # creates and seeds it before any worker runs
        demo.close()
        self._engine = engine_for(settings.demo_db_url)

    def scalar(self, sql: str, **params: object) -> object:
        """The first column of the first row of `sql` (`:name` binds `params`)."""
        with self._engine.connect() as db:
            return db.execute(text(sql), params).scalar()

    def amount(self, order_id: int) -> float:
        """`orders.amount` of one order."""
        value = self.scalar("SELECT amount FROM orders WHERE id = :id", id=order_id)
        assert isinstance(value, float), f"order {order_id} has no amount: {value!r}"
        return value

    def count(self, where: str = "1=1") -> int:
        """Rows of `orders` matching `where`."""
        value = self.scalar(f"SELECT COUNT(*) FROM orders WHERE {where}")
        assert isinstance(value, int)
        return value

    def close(self) -> None:
        """Release its connections."""
        self._engine.dispose()


@pytest.fixture
def sql_backend() -> str:
    """Where the `sql` tool's database lives: `sqlite`, the demo file in the data dir; a test
    parametrizes it with `postgresql` to run on a database of its own on the test PostgreSQL."""
    return "sqlite"


@pytest.fixture
def settings(settings: Settings, sql_backend: str, request: pytest.FixtureRequest) -> Settings:
    """The test's settings, with `SYNAPSE_SQL_URL` on PostgreSQL when `sql_backend` says so."""
    if sql_backend == "sqlite":
        return settings
    url: str = request.getfixturevalue("postgres_url")
    return settings.model_copy(update={"tools": settings.tools.model_copy(update={"sql_url": url})})


@pytest.fixture
def demo_db(settings: Settings) -> Iterator[DemoDb]:
    """This test's `sql` tool database, created and seeded."""
    database = DemoDb(settings)
    yield database
    database.close()
