"""Which chat events were already taken, durably: a redelivered event is skipped after a restart too,
and by every API process sharing the data dir.

One SQLite file, `<data_dir>/channels.db` (a `core.sqlite.SqliteFile`: WAL, a busy timeout), with
one row per (channel, event id). `claim` inserts the row and says whether this call took it, so
of two processes receiving the same frame exactly one goes on. Rows older than `KEPT` are
forgotten (chats redeliver within minutes, never days).
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from core.sqlite import SqliteFile

KEPT_SECONDS = 7 * 24 * 3600.0
PRUNE_EVERY = 500
"""Claims between two prunes of old rows."""

SCHEMA = (
    "CREATE TABLE IF NOT EXISTS seen_events ("
    " channel TEXT NOT NULL, event_id TEXT NOT NULL, seen_at REAL NOT NULL,"
    " PRIMARY KEY (channel, event_id))",
    "CREATE INDEX IF NOT EXISTS seen_events_at ON seen_events (seen_at)",
)


class SeenEvents:
    """Durable, shared "already taken" marks for chat events."""

    def __init__(self, data_dir: Path) -> None:
        self._db = SqliteFile(data_dir / "channels.db", SCHEMA)
        self._claims = 0

    def claim_now(self, channel: str, event_id: str) -> bool:
        """Take the event: True the first time (here or in any process), False after (blocking)."""
        now = time.time()
        with self._db.connect() as db:
            taken = db.execute(
                "INSERT OR IGNORE INTO seen_events (channel, event_id, seen_at) VALUES (?, ?, ?)",
                (channel, event_id, now),
            ).rowcount
            self._claims += 1
            if self._claims % PRUNE_EVERY == 0:
                db.execute("DELETE FROM seen_events WHERE seen_at < ?", (now - KEPT_SECONDS,))
        return taken == 1

    async def claim(self, channel: str, event_id: str) -> bool:
        """`claim_now` off the event loop."""
        return await asyncio.to_thread(self.claim_now, channel, event_id)

    def taken_now(self, channel: str, event_id: str) -> bool:
        """Whether the event was taken already (blocking); for channels that take an event only
        once it was handled, so that a failure lets the platform redeliver it."""
        with self._db.connect() as db:
            row = db.execute(
                "SELECT 1 FROM seen_events WHERE channel = ? AND event_id = ?", (channel, event_id)
            ).fetchone()
        return row is not None

    async def taken(self, channel: str, event_id: str) -> bool:
        """`taken_now` off the event loop."""
        return await asyncio.to_thread(self.taken_now, channel, event_id)
