"""The artifact store: content-addressed blobs in one SQLite file (`<data_dir>/artifacts.db`).

An artifact's id is `art_` plus the SHA-256 of its content, so storing the same content again
(a retried activity, the same upload twice) is a no-op returning the same reference. The worker
and the API open the same file (WAL mode, a busy timeout), each call on a short connection of
its own, so any thread or process may use it. Nothing is deleted yet: artifacts live as long as
the data dir. Methods block; async callers use `asyncio.to_thread`.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from contracts import ArtifactInfo, ArtifactRef

FILE_NAME = "artifacts.db"
BUSY_TIMEOUT_MS = 30_000

_SCHEMA = """
CREATE TABLE IF NOT EXISTS artifacts (
    artifact_id TEXT PRIMARY KEY,
    media_type TEXT NOT NULL,
    size_bytes INTEGER NOT NULL,
    name TEXT,
    owner_id TEXT,
    created_at TEXT NOT NULL,
    content BLOB NOT NULL
)
"""


class ArtifactNotFound(KeyError):
    """No artifact has this id."""

    def __init__(self, artifact_id: str) -> None:
        super().__init__(artifact_id)
        self.artifact_id = artifact_id

    def __str__(self) -> str:
        return f"no artifact {self.artifact_id!r}"


def artifact_id_of(content: bytes) -> str:
    """`art_<sha256 of content>`."""
    return "art_" + hashlib.sha256(content).hexdigest()


class ArtifactStore:
    """Content-addressed artifacts in one SQLite file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._ready = False

    @classmethod
    def for_data_dir(cls, data_dir: Path) -> ArtifactStore:
        """The store of a data dir (`<data_dir>/artifacts.db`)."""
        return cls(Path(data_dir) / FILE_NAME)

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        if not self._ready:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_MS / 1000)
        try:
            if not self._ready:
                db.execute("PRAGMA journal_mode=WAL")
                db.execute(_SCHEMA)
                self._ready = True
            with db:
                yield db
        finally:
            db.close()

    def put(
        self,
        content: bytes,
        *,
        media_type: str = "application/json",
        name: str | None = None,
        owner_id: str | None = None,
    ) -> ArtifactRef:
        """Store `content` (once); its reference."""
        artifact_id = artifact_id_of(content)
        with self._connect() as db:
            db.execute(
                "INSERT OR IGNORE INTO artifacts VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    artifact_id,
                    media_type,
                    len(content),
                    name,
                    owner_id,
                    datetime.now(UTC).isoformat(),
                    content,
                ),
            )
        return ArtifactRef(artifact_id=artifact_id, media_type=media_type, size_bytes=len(content), name=name)

    def put_json(self, value: Any, **kwargs: Any) -> ArtifactRef:
        """Store `value` as compact UTF-8 JSON."""
        data = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str).encode()
        return self.put(data, **kwargs)

    def info(self, artifact_id: str) -> ArtifactInfo:
        """What the store knows of an artifact, without its content."""
        with self._connect() as db:
            row = db.execute(
                "SELECT media_type, size_bytes, name, owner_id, created_at FROM artifacts WHERE artifact_id = ?",
                (artifact_id,),
            ).fetchone()
        if row is None:
            raise ArtifactNotFound(artifact_id)
        return _info(artifact_id, row)

    def get(self, artifact_id: str) -> tuple[ArtifactInfo, bytes]:
        """An artifact and its whole content."""
        with self._connect() as db:
            row = db.execute(
                "SELECT media_type, size_bytes, name, owner_id, created_at, content FROM artifacts "
                "WHERE artifact_id = ?",
                (artifact_id,),
            ).fetchone()
        if row is None:
            raise ArtifactNotFound(artifact_id)
        return _info(artifact_id, row[:5]), bytes(row[5])

    def get_json(self, artifact_id: str) -> Any:
        """An artifact stored as JSON, decoded."""
        return json.loads(self.get(artifact_id)[1])


def _info(artifact_id: str, row: tuple[Any, ...]) -> ArtifactInfo:
    media_type, size, name, owner_id, created_at = row
    return ArtifactInfo(
        artifact_id=artifact_id,
        media_type=media_type,
        size_bytes=size,
        name=name,
        owner_id=owner_id,
        created_at=datetime.fromisoformat(created_at),
    )
