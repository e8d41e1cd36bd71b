"""The time limit of a free read (`SYNAPSE_SQL_READ_TIMEOUT_SECONDS`): the database stops it.

A read that needs no approval runs on the agent's word alone, so it must not hold the database (or
the worker's thread) for long: a recursive CTE can count to thirty million in a dozen seconds. The
database itself stops it, so the statement is really cancelled, not merely abandoned:
- SQLite: a progress handler, called every `SQLITE_STEPS` virtual-machine steps while the
  statement runs and while its rows are read, interrupts it past the deadline;
- PostgreSQL: `SET LOCAL statement_timeout` in the read's transaction (gone when it ends).
A stopped read is a tool result the agent reads, never an error: the `run_tool` activity would
retry an error, and the same read would be stopped again.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import Connection
from sqlalchemy.exc import StatementError

SQLITE_STEPS = 1000
"""SQLite virtual-machine steps between two looks at the clock (microseconds of work)."""
QUERY_CANCELED = "57014"
"""PostgreSQL's SQLSTATE for a statement stopped by `statement_timeout` (or a cancel)."""


class ReadDeadline:
    """The time limit of one read: applied to its connection, then asked whether it stopped the read."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self._interrupted = False

    @contextmanager
    def applied(self, conn: Connection) -> Iterator[None]:
        """Limit what `conn` runs inside the block (in an open transaction, for PostgreSQL's `LOCAL`)."""
        dialect = conn.dialect.name
        if dialect == "postgresql":
            conn.exec_driver_sql(f"SET LOCAL statement_timeout = {max(1, round(self.seconds * 1000))}")
            yield
            # Off again before the COMMIT: a timeout that fired as the read finished is taken here
            # (the read is reported stopped), never by the COMMIT, which nothing would catch.
            conn.exec_driver_sql("SET LOCAL statement_timeout = 0")
            return
        if dialect != "sqlite":
            yield
            return
        driver: Any = conn.connection.dbapi_connection
        deadline = time.monotonic() + self.seconds

        def past_deadline() -> int:
            if time.monotonic() > deadline:
                self._interrupted = True
                return 1  # non-zero: SQLite interrupts the statement ("interrupted")
            return 0

        driver.set_progress_handler(past_deadline, SQLITE_STEPS)
        try:
            yield
        finally:  # the pooled connection goes back without the handler
            driver.set_progress_handler(None, 0)

    def stopped(self, err: StatementError) -> bool:
        """Whether `err` is this limit stopping the read."""
        return self._interrupted or getattr(getattr(err, "orig", None), "sqlstate", None) == QUERY_CANCELED

    def message(self, kind: str) -> str:
        """What the agent reads: the read was stopped, after how long, and what to do."""
        return (
            f"stopped after {self.seconds:g} s: a {kind} that runs without approval may take at most "
            f"{self.seconds:g} s (SYNAPSE_SQL_READ_TIMEOUT_SECONDS); narrow it (a WHERE, a LIMIT) and "
            "try again"
        )
