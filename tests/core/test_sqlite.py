"""`core.sqlite.SqliteFile`: the shared SQLite file of the artifact store, the experience index and
the channels. Connections are kept between calls; what callers see must not change for it."""

from __future__ import annotations

import os
import sqlite3
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from core.sqlite import SqliteFile

SCHEMA = ("CREATE TABLE IF NOT EXISTS notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL UNIQUE)",)


def open_files(path: Path) -> int:
    """How many descriptors of this process are open on `path` (its -wal and -shm files aside)."""
    return sum(1 for fd in Path("/proc/self/fd").iterdir() if os.path.realpath(fd) == str(path))


def count(path: Path) -> int:
    db = sqlite3.connect(path)
    try:
        return int(db.execute("SELECT count(*) FROM notes").fetchone()[0])
    finally:
        db.close()


def test_threads_writing_at_once_each_get_a_connection_and_every_row_lands(tmp_path: Path) -> None:
    notes = SqliteFile(tmp_path / "data" / "notes.db", SCHEMA)

    def write(worker: int) -> None:
        for i in range(50):
            with notes.connect() as db:
                db.execute("INSERT INTO notes (body) VALUES (?)", (f"{worker}-{i}",))

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(write, range(8)))
        after_first = open_files(notes.path)
        list(pool.map(write, range(8, 16)))

    assert count(notes.path) == 800
    # At most one per thread that wrote at once (SQLite itself holds a closed connection's file
    # open while others lock it, for the next to reuse), and no more after 400 calls more.
    assert 1 <= after_first <= 8
    assert open_files(notes.path) <= after_first, "connections are kept, not piled up"
    notes.close()
    assert open_files(notes.path) == 0


def test_a_failed_block_commits_nothing_and_the_next_call_works(tmp_path: Path) -> None:
    notes = SqliteFile(tmp_path / "notes.db", SCHEMA)
    with notes.connect() as db:
        db.execute("INSERT INTO notes (body) VALUES ('first')")

    with pytest.raises(sqlite3.IntegrityError), notes.connect() as db:
        db.execute("INSERT INTO notes (body) VALUES ('second')")
        db.execute("INSERT INTO notes (body) VALUES ('first')")  # not unique: the block fails

    with notes.connect() as db:
        db.execute("INSERT INTO notes (body) VALUES ('third')")
        rows = [body for (body,) in db.execute("SELECT body FROM notes ORDER BY id")]
    assert rows == ["first", "third"]
    notes.close()


def test_a_commit_is_seen_at_once_by_another_process_on_the_file(tmp_path: Path) -> None:
    # The worker writes and the API reads the same file, each with its own kept connections.
    worker, api = SqliteFile(tmp_path / "notes.db", SCHEMA), SqliteFile(tmp_path / "notes.db", SCHEMA)
    with api.connect() as db:
        assert db.execute("SELECT count(*) FROM notes").fetchone()[0] == 0  # api keeps this connection
    with worker.connect() as db:
        db.execute("INSERT INTO notes (body) VALUES ('recorded')")
    with api.connect() as db:
        assert [body for (body,) in db.execute("SELECT body FROM notes")] == ["recorded"]
    worker.close()
    api.close()
