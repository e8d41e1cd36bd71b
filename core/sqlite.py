"""One SQLite file that threads and processes share: WAL, a busy timeout, its schema made once.

The artifact store and the experience index each keep one such file under the data dir; the
worker writes and the API reads at the same time. Every call takes a connection of its own (so
any thread may call), commits on success and gives it back. Methods block: async callers use
`asyncio.to_thread`.

Connections are kept for the next call (`KEPT_CONNECTIONS` at most), not closed: closing the last
connection to a file in WAL mode checkpoints the log into the file, which took most of a short
write's time when every call opened and closed its own.
"""

from __future__ import annotations

import sqlite3
import threading
import time
import weakref
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

BUSY_TIMEOUT_SECONDS = 30.0
"""How long a writer waits for another process's write to finish before failing."""
KEPT_CONNECTIONS = 4
"""Idle connections a file keeps for the next calls; more at once are opened and closed."""
SETUP_RETRY_SECONDS = 0.01
"""Pause before trying again to switch a file that another process is opening to WAL."""


class SqliteFile:
    """A SQLite database file, created with `schema` on first use."""

    def __init__(self, path: Path, schema: Sequence[str]) -> None:
        self.path = path
        self._schema = schema
        self._ready = False
        self._idle: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        self._setup_lock = threading.Lock()
        weakref.finalize(self, _close_all, self._idle, self._lock)  # when the file is dropped

    @contextmanager
    def connect(self) -> Iterator[sqlite3.Connection]:
        """A connection in a transaction (committed when the block ends without an error)."""
        db = self._take()
        try:
            with db:
                yield db
        except BaseException:
            db.close()  # whatever went wrong, the next call starts on a fresh connection
            raise
        with self._lock:
            if len(self._idle) < KEPT_CONNECTIONS:
                self._idle.append(db)
                return
        db.close()

    def _take(self) -> sqlite3.Connection:
        with self._lock:
            if self._idle:
                return self._idle.pop()
        if not self._ready:
            with self._setup_lock:  # one thread of this process sets the file up
                if not self._ready:
                    self._set_up()
        # Used by one thread at a time: the pool hands a connection to one caller until it is back.
        return sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_SECONDS, check_same_thread=False)

    def _set_up(self) -> None:
        """WAL mode and the schema."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_SECONDS)
        try:
            use_write_ahead_log(db)
            with db:
                for statement in self._schema:
                    db.execute(statement)
            self._ready = True
        finally:
            db.close()

    def close(self) -> None:
        """Close the kept connections (a later call opens new ones)."""
        _close_all(self._idle, self._lock)


def use_write_ahead_log(db: sqlite3.Connection) -> None:
    """Put the connection's file in WAL mode (it stays so). Switching needs the file to itself for a
    moment, and SQLite refuses at once (no busy wait) while another connection is opening it: tried
    again for up to `BUSY_TIMEOUT_SECONDS`."""
    deadline = time.monotonic() + BUSY_TIMEOUT_SECONDS
    while True:
        try:
            db.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as err:
            if "locked" not in str(err) or time.monotonic() > deadline:
                raise
            time.sleep(SETUP_RETRY_SECONDS)


def _close_all(idle: list[sqlite3.Connection], lock: threading.Lock) -> None:
    with lock:
        kept, idle[:] = list(idle), []
    for db in kept:
        db.close()
