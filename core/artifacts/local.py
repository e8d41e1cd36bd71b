"""Artifacts in one SQLite file under the data dir (`<data_dir>/artifacts.db`): the default.

The worker and the API open the same file (`core.sqlite.SqliteFile`: WAL, a busy timeout, a
connection per call taken from the few it keeps), so any thread or process on the machine may
use it.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

from contracts import ArtifactInfo

from ..sqlite import SqliteFile

FILE_NAME = "artifacts.db"

_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS artifacts (
        artifact_id TEXT PRIMARY KEY,
        media_type TEXT NOT NULL,
        size_bytes INTEGER NOT NULL,
        name TEXT,
        owner_id TEXT,
        created_at TEXT NOT NULL,
        content BLOB NOT NULL
    )""",
)
_INFO_COLUMNS = "media_type, size_bytes, name, owner_id, created_at"


class SqliteBlobs:
    """The `Blobs` of a SQLite file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._file = SqliteFile(path, _SCHEMA)

    @classmethod
    def for_data_dir(cls, data_dir: Path) -> SqliteBlobs:
        """The file of a data dir."""
        return cls(Path(data_dir) / FILE_NAME)

    def write(self, info: ArtifactInfo, content: bytes) -> None:
        """Insert the artifact unless its id is there already."""
        with self._file.connect() as db:
            db.execute(
                "INSERT OR IGNORE INTO artifacts VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    info.artifact_id,
                    info.media_type,
                    info.size_bytes,
                    info.name,
                    info.owner_id,
                    info.created_at.isoformat(),
                    content,
                ),
            )

    def info(self, artifact_id: str) -> ArtifactInfo | None:
        """The artifact's row, without its content."""
        with self._file.connect() as db:
            row = db.execute(
                f"SELECT {_INFO_COLUMNS} FROM artifacts WHERE artifact_id = ?", (artifact_id,)
            ).fetchone()
        return None if row is None else _info(artifact_id, row)

    def read(self, artifact_id: str) -> tuple[ArtifactInfo, bytes] | None:
        """The artifact's row and content."""
        with self._file.connect() as db:
            row = db.execute(
                f"SELECT {_INFO_COLUMNS}, content FROM artifacts WHERE artifact_id = ?", (artifact_id,)
            ).fetchone()
        return None if row is None else (_info(artifact_id, row[:5]), bytes(row[5]))


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
