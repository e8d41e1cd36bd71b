"""One SQLite file that threads and processes share: WAL, a busy timeout, its schema made once.

The artifact store and the experience index each keep one such file under the data dir; the
worker writes and the API reads at the same time. Every call opens a short connection of its own
(so any thread may call), commits on success and closes. Methods block: async callers use
`asyncio.to_thread`.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

BUSY_TIMEOUT_SECONDS = 30.0
"""How long a writer waits for another process's write to finish before failing."""


class SqliteFile:
    """A SQLite database file, created with `schema` on first use."""

    def __init__(self, path: Path, schema: Sequence[str]) -> None:
        self.path = path
        self._schema = schema
        self._ready = False

    @contextmanager
    def connect(self) -> Iterator[sqlite3.Connection]:
        """A connection in a transaction (committed when the block ends without an error)."""
        if not self._ready:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_SECONDS)
        try:
            if not self._ready:
                db.execute("PRAGMA journal_mode=WAL")
                for statement in self._schema:
                    db.execute(statement)
                self._ready = True
            with db:
                yield db
        finally:
            db.close()
