"""Which projects an uploaded artifact was given to, for keys scoped to projects.

Artifact ids are content addresses (`art_<sha256>`), shared by whoever stores the same bytes, so an
id says nothing of whose it is. A scoped key reads an artifact when its upload was made by a key of
the same project (a row here), or when the workflow that stored it first (`ArtifactInfo.owner_id`:
a session, a graph task) is of one of its projects (`api.calls.scope`). Anything else is 404.

One SQLite file, `<data_dir>/artifact_projects.db` (a `core.sqlite.SqliteFile`: WAL, a busy
timeout), shared by the API processes of a data dir, like the chat channels' `channels.db`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Collection
from pathlib import Path

from ..sqlite import SqliteFile

FILE_NAME = "artifact_projects.db"
SCHEMA = (
    "CREATE TABLE IF NOT EXISTS artifact_projects ("
    " artifact_id TEXT NOT NULL, project TEXT NOT NULL, PRIMARY KEY (artifact_id, project))",
)


class ArtifactProjects:
    """The projects each uploaded artifact was given to."""

    def __init__(self, data_dir: Path) -> None:
        self._db = SqliteFile(data_dir / FILE_NAME, SCHEMA)

    def give_now(self, artifact_id: str, projects: Collection[str]) -> None:
        """Let keys of `projects` read the artifact (blocking)."""
        with self._db.connect() as db:
            db.executemany(
                "INSERT OR IGNORE INTO artifact_projects (artifact_id, project) VALUES (?, ?)",
                [(artifact_id, project) for project in sorted(projects)],
            )

    def given_now(self, artifact_id: str, projects: Collection[str]) -> bool:
        """Whether the artifact was given to one of `projects` (blocking)."""
        if not projects:
            return False
        marks = ", ".join("?" for _ in projects)
        with self._db.connect() as db:
            row = db.execute(
                f"SELECT 1 FROM artifact_projects WHERE artifact_id = ? AND project IN ({marks})",
                (artifact_id, *sorted(projects)),
            ).fetchone()
        return row is not None

    async def give(self, artifact_id: str, projects: Collection[str]) -> None:
        """`give_now` off the event loop."""
        await asyncio.to_thread(self.give_now, artifact_id, projects)

    async def given(self, artifact_id: str, projects: Collection[str]) -> bool:
        """`given_now` off the event loop."""
        return await asyncio.to_thread(self.given_now, artifact_id, projects)
