"""Who an artifact belongs to, for keys scoped to projects: the projects it was uploaded for and
the workflows (sessions, graphs, task runs) whose results or archived pages it holds.

Artifact ids are content-addressed, so the same content may belong to several projects: each
writer adds an owner and none is ever removed. The worker knows the workflow it offloads a result
or archives a page for (the artifact's `owner_id`), not that workflow's project, so it records the
workflow; the API asks Temporal for that workflow's project when a scoped key reads the artifact
(`api.calls.scope`). An upload records the project it was made for.

Owners live beside the artifacts, where every worker and API process of the deployment sees them:
a table of `<data_dir>/artifact_owners.db` beside the local store, or one empty object per owner,
`<prefix>owners/<artifact id>/<kind>/<name>`, in the bucket. Methods block; async callers use
`asyncio.to_thread`.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol
from urllib.parse import quote, unquote

from ..sqlite import SqliteFile
from .local import SqliteBlobs
from .s3 import S3Blobs
from .store import ArtifactStore

FILE_NAME = "artifact_owners.db"
PROJECT, WORKFLOW = "project", "workflow"
"""The two kinds of owner."""

_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS artifact_owners (
        artifact_id TEXT NOT NULL,
        kind TEXT NOT NULL,
        name TEXT NOT NULL,
        PRIMARY KEY (artifact_id, kind, name)
    )""",
)


@dataclass(frozen=True)
class Ownership:
    """An artifact's owners: projects named directly, and workflows whose project counts."""

    projects: frozenset[str] = field(default_factory=frozenset)
    workflows: frozenset[str] = field(default_factory=frozenset)


class OwnerRecords(Protocol):
    """Where owners are kept: (artifact id, kind, name) triples, added once, never removed."""

    def add(self, artifact_id: str, kind: str, name: str) -> None:
        """Record one owner (again: nothing changes)."""
        ...

    def of(self, artifact_id: str) -> list[tuple[str, str]]:
        """The (kind, name) of each owner of the artifact."""
        ...


class SqliteOwners:
    """Owners in a table of a SQLite file."""

    def __init__(self, path: Path) -> None:
        self._file = SqliteFile(path, _SCHEMA)

    def add(self, artifact_id: str, kind: str, name: str) -> None:
        """Insert the row unless it is there."""
        with self._file.connect() as db:
            db.execute("INSERT OR IGNORE INTO artifact_owners VALUES (?, ?, ?)", (artifact_id, kind, name))

    def of(self, artifact_id: str) -> list[tuple[str, str]]:
        """The artifact's rows."""
        with self._file.connect() as db:
            rows = db.execute(
                "SELECT kind, name FROM artifact_owners WHERE artifact_id = ?", (artifact_id,)
            ).fetchall()
        return [(kind, name) for kind, name in rows]


class S3Owners:
    """Owners as empty objects under `<prefix>owners/<artifact id>/` of the artifacts' bucket,
    through the bucket's own calls (`S3Blobs._call`: its errors, the same words)."""

    def __init__(self, blobs: S3Blobs) -> None:
        self._blobs = blobs

    def _folder(self, artifact_id: str) -> str:
        return f"{self._blobs.prefix}owners/{artifact_id}/"

    def add(self, artifact_id: str, kind: str, name: str) -> None:
        """Put the owner's object (putting it again changes nothing). A name too long for an object
        key (S3 keys end at 1,024 bytes) is kept in the object, named by its hash."""
        quoted = quote(name, safe="")
        body = b""
        if len(quoted) > LONGEST_NAME_IN_KEY:
            quoted, body = HASHED + hashlib.sha256(name.encode()).hexdigest(), name.encode()
        key = f"{self._folder(artifact_id)}{kind}/{quoted}"
        self._blobs._call("put_object", Bucket=self._blobs.bucket, Key=key, Body=body)

    def of(self, artifact_id: str) -> list[tuple[str, str]]:
        """The owners' objects listed (every page)."""
        folder, found, token = self._folder(artifact_id), [], None
        while True:
            more: dict[str, str] = {"ContinuationToken": token} if token else {}
            listed = self._blobs._call("list_objects_v2", Bucket=self._blobs.bucket, Prefix=folder, **more)
            for item in (listed or {}).get("Contents", []):
                kind, _, name = item["Key"].removeprefix(folder).partition("/")
                found.append(
                    (kind, self._long_name(item["Key"]) if name.startswith(HASHED) else unquote(name))
                )
            token = (listed or {}).get("NextContinuationToken")
            if not token:
                return found

    def _long_name(self, key: str) -> str:
        got = self._blobs._call("get_object", Bucket=self._blobs.bucket, Key=key)
        return bytes(got["Body"].read()).decode() if got else ""


LONGEST_NAME_IN_KEY = 512
"""Longest quoted owner name kept in an object's key (the rest of the key stays far below 1,024 bytes)."""
HASHED = "="
"""How the key of an owner named by its hash begins (`=`, which a quoted name never holds)."""


class ArtifactOwners:
    """The owners of artifacts, kept in `records`."""

    def __init__(self, records: OwnerRecords) -> None:
        self.records = records

    @classmethod
    def beside(cls, store: ArtifactStore) -> ArtifactOwners:
        """The owners kept beside `store`'s artifacts (in the same directory or bucket).

        Raises:
            TypeError: The store's backend is neither of the two.
        """
        blobs = store.blobs
        if isinstance(blobs, SqliteBlobs):
            return cls(SqliteOwners(blobs.path.with_name(FILE_NAME)))
        if isinstance(blobs, S3Blobs):
            return cls(S3Owners(blobs))
        raise TypeError(f"artifact owners are not kept beside a {type(blobs).__name__}")

    def add_project(self, artifact_id: str, project: str) -> None:
        """`project`'s keys may read the artifact."""
        self.records.add(artifact_id, PROJECT, project)

    def add_workflow(self, artifact_id: str, workflow_id: str) -> None:
        """The keys of `workflow_id`'s project may read the artifact."""
        self.records.add(artifact_id, WORKFLOW, workflow_id)

    def of(self, artifact_id: str) -> Ownership:
        """Every owner recorded for the artifact."""
        found = self.records.of(artifact_id)
        return Ownership(
            projects=frozenset(name for kind, name in found if kind == PROJECT),
            workflows=frozenset(name for kind, name in found if kind == WORKFLOW),
        )
