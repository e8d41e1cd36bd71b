"""`core.sqlite.SqliteFile`: the shared SQLite file of the artifact store, the experience index and
the channels. Connections are kept between calls; what callers see must not change for it."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from core.sqlite import SqliteFile

SCHEMA = ("CREATE TABLE IF NOT EXISTS notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL UNIQUE)",)


def open_files(path: Path) -> int:
    """How many descriptors of this process are open on `path` (its -wal and -shm files aside)."""
    target = str(path.resolve())
    return sum(1 for fd in Path("/proc/self/fd").iterdir() if os.path.realpath(fd) == target)


WRITER = """
import sys
import threading
from pathlib import Path
from core.sqlite import SqliteFile
notes = SqliteFile(Path(sys.argv[1]), [sys.argv[2]])
with notes.connect() as db:
    db.execute("INSERT INTO notes (body) VALUES (?)", (sys.argv[3],))
"""
"""A process of its own (as the worker is to the API) writing one note through a `SqliteFile`."""


def write_elsewhere(path: Path, body: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-c", WRITER, str(path), SCHEMA[0], body],
        cwd=Path(__file__).parents[2],
        stderr=subprocess.PIPE,
    )


def finished(process: subprocess.Popen[bytes]) -> None:
    _, err = process.communicate(timeout=60)
    assert process.returncode == 0, err.decode()


def journal_mode(path: Path) -> str:
    db = sqlite3.connect(path)
    try:
        return str(db.execute("PRAGMA journal_mode").fetchone()[0])
    finally:
        db.close()


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
    # The API reads with a connection it keeps; the worker, another process, writes meanwhile.
    api = SqliteFile(tmp_path / "notes.db", SCHEMA)
    with api.connect() as db:
        assert db.execute("SELECT count(*) FROM notes").fetchone()[0] == 0
    finished(write_elsewhere(api.path, "recorded"))
    with api.connect() as db:
        assert [body for (body,) in db.execute("SELECT body FROM notes")] == ["recorded"]
    api.close()


def test_processes_opening_a_new_file_at_the_same_moment_all_get_in(tmp_path: Path) -> None:
    # The API and the worker start together on a fresh data dir: each sets the file up (WAL, the
    # schema), which SQLite lets only one of them do at a time. Each thread here has its own
    # `SqliteFile`, as each process has; they all open the file at the same moment.
    for attempt in range(20):
        path = tmp_path / f"fresh-{attempt}.db"
        together = threading.Barrier(6)

        def write(i: int, path: Path = path, together: threading.Barrier = together) -> None:
            notes = SqliteFile(path, SCHEMA)
            together.wait(timeout=30)
            with notes.connect() as db:
                db.execute("INSERT INTO notes (body) VALUES (?)", (f"writer {i}",))
            notes.close()

        with ThreadPoolExecutor(6) as pool:
            list(pool.map(write, range(6)))
        assert count(path) == 6
        assert journal_mode(path) == "wal"
