"""A free read has a time limit (`SYNAPSE_SQL_READ_TIMEOUT_SECONDS`): past it the database stops the
read and the agent reads why; an approved statement has none (issue 47). On SQLite and PostgreSQL."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator

import pytest

from activities.tools.sql.database import SqlDatabase

LIMIT = 0.5
SHORT = 0.1
"""The limit where a slow approved write is timed: it takes five times as long, and more."""
SLOW_READ = (
    "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 1000000000) "
    "SELECT count(*) FROM c"
)
"""Counts to a billion: minutes on either database."""
ROWS = 1_000_000
SLOW_WRITE = (
    f"CREATE TABLE counted AS WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c "
    f"WHERE n < {ROWS}) SELECT n FROM c"
)


@pytest.fixture
def database(url: str) -> Iterator[SqlDatabase]:
    limited = SqlDatabase(url, read_timeout_seconds=LIMIT)
    yield limited
    limited.close()


def test_a_slow_free_read_is_stopped_and_the_agent_told_why(database: SqlDatabase) -> None:
    started = time.monotonic()
    result = database.run(SLOW_READ)
    took = time.monotonic() - started

    assert not result.ok and result.error is not None
    assert result.error.startswith(
        f"stopped after {LIMIT:g} s: a SELECT that runs without approval may take at most {LIMIT:g} s "
        "(SYNAPSE_SQL_READ_TIMEOUT_SECONDS)"
    ), result.error
    assert "(statement: WITH RECURSIVE c(n)" in result.error
    assert took < 10 * LIMIT, f"the read ran {took:.1f} s"


def test_reads_after_a_stopped_one_run_as_before(database: SqlDatabase) -> None:
    for _ in range(3):  # the pooled connection comes back the same, with or without a limit
        assert not database.run(SLOW_READ).ok
        read = database.run("SELECT count(*) FROM orders")
        assert read.ok and read.content is not None and read.content["rows"] == [[8]], read


def test_an_approved_statement_takes_as_long_as_it_needs(url: str) -> None:
    database = SqlDatabase(url, read_timeout_seconds=SHORT)
    try:
        database.run("SELECT 1")  # seeds the demo table first, outside the timing
        started = time.monotonic()
        written = database.run(SLOW_WRITE, f"approval-{uuid.uuid4().hex}")
        took = time.monotonic() - started
    finally:
        database.close()
    counting = SqlDatabase(url)  # its limit is ample for a count
    try:
        counted = counting.run("SELECT count(*) FROM counted")
    finally:
        counting.close()

    assert written.ok, written.error
    assert took > SHORT, f"the write took {took:.2f} s: make SLOW_WRITE slower for this test to mean anything"
    assert counted.ok and counted.content is not None and counted.content["rows"] == [[ROWS]], counted
