"""SQLAlchemy engines for the stores a URL selects: SQLite on this machine, PostgreSQL to share.

The `sql` tool (`SYNAPSE_SQL_URL`), the approval rules (`SYNAPSE_RULES_URL`) and the experience
index (`SYNAPSE_EXPERIENCE_URL`) each take a URL; this module turns one into an engine the same
way for all three:

- `sqlite:///path`: the file's directory is created, and a writer waits up to 30 s for another
  process's write (the worker and the API share the file); Synapse's own files are in WAL mode.
- `postgresql://...`: psycopg 3 (the driver Synapse ships), unless the URL names another.

`create_schema` makes creating tables safe when several processes start at once.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, create_engine, event, text
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import OperationalError

from .sqlite import use_write_ahead_log

BUSY_TIMEOUT_SECONDS = 30
"""How long a SQLite writer waits for another process's write to finish."""
SCHEMA_LOCK = 0x53594E41
"""PostgreSQL advisory lock key held while a Synapse store creates its tables ("SYNA")."""
SQLITE_ATTEMPTS = 3
"""Tries of a SQLite schema transaction that lost a race to create the same table."""


def store_url(url: str | URL) -> URL:
    """The URL as SQLAlchemy reads it; plain `postgresql://` uses psycopg 3.

    Raises:
        sqlalchemy.exc.ArgumentError: Not a URL.
    """
    parsed = make_url(url)
    if parsed.drivername == "postgresql":
        parsed = parsed.set(drivername="postgresql+psycopg")
    return parsed


def is_sqlite(url: URL) -> bool:
    """Whether the URL names a SQLite database."""
    return url.get_backend_name() == "sqlite"


def engine_for(url: str | URL, *, own_file: bool = False) -> Engine:
    """An engine for a store's URL (see the module docstring); no connection is made yet.

    `own_file`: a SQLite file only Synapse uses (its rules, the demo database) is put in WAL mode:
    a commit syncs the disk once instead of three times, and readers do not wait for a writer. A
    file someone else's programs use too is left in the mode they chose.
    """
    parsed = store_url(url)
    if not is_sqlite(parsed):
        return create_engine(parsed, pool_pre_ping=True)
    if parsed.database not in (None, "", ":memory:"):
        Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine(parsed, connect_args={"timeout": BUSY_TIMEOUT_SECONDS})
    if own_file and parsed.database not in (None, "", ":memory:"):
        event.listen(engine, "connect", _write_ahead)
    return engine


def _write_ahead(dbapi_connection: Any, _record: Any) -> None:
    use_write_ahead_log(dbapi_connection)


def create_schema(engine: Engine, create: Callable[[Connection], None]) -> None:
    """Run `create` (which makes tables when absent) in one transaction, safely when several
    processes start at once.

    PostgreSQL fails the second of two concurrent `CREATE TABLE`s of one table (a duplicate
    catalog entry), so there the transaction first takes an advisory lock, held until it ends.
    On SQLite a process may see the table absent and then fail to create it because another just
    did: `create` runs once more, and then finds it.
    """
    for attempt in range(SQLITE_ATTEMPTS):
        try:
            with engine.begin() as conn:
                if engine.dialect.name == "postgresql":
                    conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": SCHEMA_LOCK})
                create(conn)
            return
        except OperationalError as err:
            if (
                engine.dialect.name != "sqlite"
                or "already exists" not in str(err.orig)
                or attempt == SQLITE_ATTEMPTS - 1
            ):
                raise
