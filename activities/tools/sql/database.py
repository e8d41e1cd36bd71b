"""The `sql` tool's database: runs one SQL statement with SQLAlchemy, exactly once per approval.

Blocking database work happens here, synchronously; the `run_tool` activity calls it through
`asyncio.to_thread`. One engine per `SqlDatabase`; SQLAlchemy engines are thread-safe and each
call checks out its own connection.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from contextlib import nullcontext
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, event, inspect, text
from sqlalchemy.engine import CursorResult
from sqlalchemy.exc import IntegrityError, OperationalError, StatementError

from contracts import ToolResult
from core.database import create_schema, engine_for, is_sqlite, store_url

from .deadline import ReadDeadline
from .syntax import SqlClassification, classify, sqlglot_dialect

__all__ = ["PAUSE_FILE_ENV", "SEED_ORDERS", "SqlClassification", "SqlDatabase", "classify"]

logger = logging.getLogger(__name__)

TOOL_ID = "sql"
#: TEST-ONLY fault hook. When this env var names a file, a destructive statement waits
#: (polling every 50 ms, for at most 60 s) after it executed and before its transaction commits,
#: for as long as the file exists. Fault tests use it to kill a worker mid-transaction and prove
#: that the retried activity applies the statement once. Never set it in production.
PAUSE_FILE_ENV = "SYNAPSE_TEST_SQL_PAUSE_FILE"
_PAUSE_POLL_SECONDS = 0.05
_PAUSE_MAX_SECONDS = 60.0

#: Rows of the demo `orders` table: (id, customer, amount, status). Three are `cancelled`, so the
#: README walkthrough's `DELETE FROM orders WHERE status = 'cancelled'` affects 3 rows.
SEED_ORDERS: list[tuple[int, str, float, str]] = [
    (1, "Alice", 120.50, "paid"),
    (2, "Bob", 35.00, "cancelled"),
    (3, "Carol", 89.99, "shipped"),
    (4, "Dave", 15.25, "cancelled"),
    (5, "Erin", 240.00, "pending"),
    (6, "Frank", 12.00, "cancelled"),
    (7, "Grace", 64.40, "paid"),
    (8, "Heidi", 150.00, "shipped"),
]

_CREATE_ORDERS = (
    "CREATE TABLE orders (id INTEGER PRIMARY KEY, customer TEXT NOT NULL, "
    "amount DOUBLE PRECISION NOT NULL, status TEXT NOT NULL)"
)
_CREATE_RUNS = (
    "CREATE TABLE IF NOT EXISTS synapse_tool_runs (interaction_id TEXT PRIMARY KEY, "
    "tool_id TEXT, result_json TEXT, applied_at TEXT)"
)
# The exactly-once record's statements, built once (SQLAlchemy caches their compiled form).
_CLAIM = text("INSERT INTO synapse_tool_runs (interaction_id, tool_id, applied_at) VALUES (:i, :t, :at)")
_STORE_RESULT = text("UPDATE synapse_tool_runs SET result_json = :r WHERE interaction_id = :i")
_STORED_RESULT = text("SELECT result_json FROM synapse_tool_runs WHERE interaction_id = :i")


def _json_value(value: Any) -> Any:
    """A cell as a JSON value (bytes as hex, decimals and dates as text)."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value).hex()
    return str(value)


def _one_line(sql: str, limit: int = 80) -> str:
    flat = " ".join(sql.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _is_transient(err: StatementError) -> bool:
    """Errors worth an activity retry (a busy database, a dropped connection), not a tool error."""
    if getattr(err, "connection_invalidated", False):
        return True
    message = str(getattr(err, "orig", err)).lower()
    return isinstance(err, OperationalError) and ("locked" in message or "busy" in message)


def _wait_while_pause_file_exists() -> None:
    """TEST-ONLY: see `PAUSE_FILE_ENV`. Does nothing unless the env var is set."""
    path = os.environ.get(PAUSE_FILE_ENV)
    if not path:
        return
    deadline = time.monotonic() + _PAUSE_MAX_SECONDS
    logger.warning("%s is set: pausing before commit while %s exists (test only)", PAUSE_FILE_ENV, path)
    while Path(path).exists() and time.monotonic() < deadline:
        time.sleep(_PAUSE_POLL_SECONDS)


class SqlDatabase:
    """Runs SQL statements for the `sql` tool on SQLite or PostgreSQL (`core.database`).

    A destructive statement run with an interaction id is applied exactly once: in the same
    transaction it first claims the id in `synapse_tool_runs` (primary key), then runs and stores
    its result. A retried activity's claim fails on the key, and it gets the stored result back
    (`replayed=True`) instead of running the statement again; nothing is read before the claim,
    so a first run is one transaction with no extra round trip. A second claim of the same id
    waits for the first transaction (SQLite's lock, PostgreSQL's row), then fails and reads it.

    The demo database gets a seeded `orders` table on first use (`seed_demo`); any other database
    is left as it is, but for `synapse_tool_runs`.
    """

    def __init__(
        self, url: str, max_rows: int = 100, *, seed_demo: bool = True, read_timeout_seconds: float = 10.0
    ) -> None:
        """Create the engine (no I/O yet; the database is prepared on first use).

        Args:
            url: SQLAlchemy URL, e.g. `sqlite:///.synapse/demo.db` (its directory is created) or
                `postgresql://user:password@host/db`.
            max_rows: Rows a result keeps; the rest are counted and cut.
            seed_demo: Create and fill the demo `orders` table when the database has none; the
                file is Synapse's own, so it is kept in WAL mode (`core.database.engine_for`).
            read_timeout_seconds: How long a read that needs no approval may take (`deadline`).
        """
        self.max_rows = max_rows
        self.read_timeout_seconds = read_timeout_seconds
        self.seed_demo = seed_demo
        self._url = store_url(url)
        self._engine: Engine = engine_for(self._url, own_file=seed_demo)
        self.dialect = sqlglot_dialect(self._engine.dialect.name)
        if is_sqlite(self._url):
            self._use_real_sqlite_transactions(self._engine)
        self._ready = False
        self._ready_lock = threading.Lock()

    @staticmethod
    def _use_real_sqlite_transactions(engine: Engine) -> None:
        """Make pysqlite BEGIN for every transaction, so DDL and the claim share one (SQLAlchemy docs)."""

        @event.listens_for(engine, "connect")
        def _no_driver_transactions(dbapi_connection: Any, _record: Any) -> None:
            dbapi_connection.isolation_level = None

        @event.listens_for(engine, "begin")
        def _begin(connection: Connection) -> None:
            connection.exec_driver_sql("BEGIN")

    def classify(self, sql: str) -> SqlClassification:
        """Classify `sql` in this database's dialect (see `sql_syntax.classify`)."""
        return classify(sql, self.dialect)

    def close(self) -> None:
        """Release the engine's connections."""
        self._engine.dispose()

    def prepare(self) -> None:
        """Create the runs table, and the demo `orders` (seeded) if absent and `seed_demo`.

        Runs on first use; the worker also calls it at start so the demo database exists
        before any tool runs. Safe to call again, also from several processes at once.
        """
        with self._ready_lock:
            if self._ready:
                return
            create_schema(self._engine, self._create)
            self._ready = True
            logger.info("sql tool database ready: %s", self._url.render_as_string(hide_password=True))

    def _create(self, conn: Connection) -> None:
        conn.execute(text(_CREATE_RUNS))
        if self.seed_demo and not inspect(conn).has_table("orders"):
            conn.execute(text(_CREATE_ORDERS))
            conn.execute(
                text("INSERT INTO orders (id, customer, amount, status) VALUES (:i, :c, :a, :s)"),
                [{"i": i, "c": c, "a": a, "s": s} for i, c, a, s in SEED_ORDERS],
            )
            logger.info("created and seeded the demo orders table (%d rows)", len(SEED_ORDERS))

    def run(self, sql: str, interaction_id: str | None = None) -> ToolResult:
        """Run one statement and describe its result.

        Args:
            sql: One SQL statement.
            interaction_id: The approval that authorised the run; makes a destructive statement
                exactly-once.

        Returns:
            `ok=True` with content `{rowcount, statement}` (a statement that changes data) or
            `{columns, rows, rowcount, statement}` (rows; `truncated` and `note` when cut), or
            `ok=False` with an error naming the statement (SQL errors are results, not raised; so is
            a read that needs no approval stopped past `read_timeout_seconds`).

        Raises:
            sqlalchemy.exc.OperationalError: The database is busy or unreachable (retryable).
        """
        self.prepare()
        kind = self.classify(sql)
        if kind.kind == "MULTIPLE":
            return self._failure(
                sql, kind, f"{kind.statements} statements given; send one statement at a time"
            )
        record = kind.destructive and interaction_id is not None
        deadline = None if kind.destructive else ReadDeadline(self.read_timeout_seconds)
        with self._engine.connect() as conn, conn.begin() as tx:
            if record:
                try:
                    self._claim(conn, interaction_id)
                except IntegrityError:  # an earlier attempt committed it (or did meanwhile): its result
                    tx.rollback()
                    return self._stored_result(interaction_id) or self._failure(
                        sql, kind, f"interaction {interaction_id!r} was claimed but has no stored result"
                    )
            try:
                with deadline.applied(conn) if deadline is not None else nullcontext():
                    content = self._execute(conn, sql, kind)
            except StatementError as err:
                if deadline is not None and deadline.stopped(err):
                    tx.rollback()
                    logger.info("a free read was stopped after %g s (%d chars)", deadline.seconds, len(sql))
                    return self._failure(sql, kind, deadline.message(kind.kind))
                if _is_transient(err):
                    raise
                tx.rollback()
                return self._failure(sql, kind, str(getattr(err, "orig", None) or err))
            result = ToolResult(
                tool_id=TOOL_ID,
                ok=True,
                content=content,
                # the statement's kind is in the content: not repeated here (issue 51's bytes)
                metadata={"destructive": kind.destructive},
            )
            if record:
                conn.execute(_STORE_RESULT, {"r": result.model_dump_json(), "i": interaction_id})
            if kind.destructive:
                _wait_while_pause_file_exists()
        return result

    def _execute(self, conn: Connection, sql: str, kind: SqlClassification) -> dict[str, Any]:
        # User SQL goes to the driver verbatim: `text()` would read `:word` as a bind, and without
        # `no_parameters` psycopg would read `%` as a placeholder (`LIKE 'A%'`).
        result: CursorResult[Any] = conn.execution_options(no_parameters=True).exec_driver_sql(sql)
        # A result carries what it has: the tool's result is written three times in a turn's
        # history (the tool's marker, the approver's answer, the next step's input), so no empty
        # `columns`/`rows`, no `truncated: false`, no empty `note` (readers use `.get`; results
        # written with them, older ones, still read).
        if not result.returns_rows:
            rowcount = result.rowcount if result.rowcount >= 0 else None
            return {"rowcount": rowcount, "statement": kind.kind}
        columns = list(result.keys())
        rows = [[_json_value(value) for value in row] for row in result.fetchmany(self.max_rows)]
        total = len(rows) + sum(1 for _ in result)
        content: dict[str, Any] = {
            "columns": columns,
            "rows": rows,
            "rowcount": total,
            "statement": kind.kind,
        }
        if total > len(rows):
            content |= {"truncated": True, "note": f"showing the first {len(rows)} of {total} rows"}
        return content

    @staticmethod
    def _claim(conn: Connection, interaction_id: str | None) -> None:
        conn.execute(_CLAIM, {"i": interaction_id, "t": TOOL_ID, "at": datetime.now(UTC).isoformat()})

    def _stored_result(self, interaction_id: str | None) -> ToolResult | None:
        """The committed result of an earlier run of this interaction, marked `replayed`."""
        with self._engine.connect() as conn:
            stored = conn.execute(_STORED_RESULT, {"i": interaction_id}).scalar_one_or_none()
        if stored is None:
            return None
        result = ToolResult.model_validate_json(stored)
        logger.info("interaction %s was already applied; returning its stored result", interaction_id)
        return result.model_copy(update={"metadata": {**result.metadata, "replayed": True}})

    @staticmethod
    def _failure(sql: str, kind: SqlClassification, message: str) -> ToolResult:
        return ToolResult(
            tool_id=TOOL_ID,
            ok=False,
            error=f"{message} (statement: {_one_line(sql)})",
            metadata={"statement": kind.kind, "destructive": kind.destructive},
        )
