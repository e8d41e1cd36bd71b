"""The artifact store: large content kept once, out of workflow history, and referenced by id.

An artifact's id is `art_` plus the SHA-256 of its content, so storing the same content again
(a retried activity, the same upload twice) is a no-op returning the same reference. Where the
bytes live is a backend (`Blobs`): one SQLite file under the data dir by default
(`local.SqliteBlobs`), or an S3-compatible bucket (`s3.S3Blobs`) when `SYNAPSE_ARTIFACTS_URL` is
`s3://bucket/prefix`. Every worker and API process of a deployment must use the same one.
Nothing is deleted yet.

With `SYNAPSE_CODEC_KEYS` set, the backend holds every artifact's content sealed
(`core.at_rest`), bound to its id; the id stays that of the content in clear, so the same
content is still stored once. Content written before the keys were set reads as it is (its
bytes still hash to its id). Methods block; async callers use `asyncio.to_thread`.
"""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from contracts import ArtifactInfo, ArtifactRef

from ..at_rest import Sealer
from ..settings import Settings


class ArtifactNotFound(KeyError):
    """No artifact has this id."""

    def __init__(self, artifact_id: str) -> None:
        super().__init__(artifact_id)
        self.artifact_id = artifact_id

    def __str__(self) -> str:
        return f"no artifact {self.artifact_id!r}"


class ArtifactStorageUnavailable(Exception):
    """The backend could not be reached or refused the call; `str(err)` says where and why."""


def artifact_id_of(content: bytes) -> str:
    """`art_<sha256 of content>`."""
    return "art_" + hashlib.sha256(content).hexdigest()


class Blobs(Protocol):
    """Where artifacts' bytes and metadata live."""

    def write(self, info: ArtifactInfo, content: bytes) -> None:
        """Keep `content` under `info.artifact_id`, unless it is there already (first write wins)."""
        ...

    def info(self, artifact_id: str) -> ArtifactInfo | None:
        """The artifact's metadata, or None."""
        ...

    def read(self, artifact_id: str) -> tuple[ArtifactInfo, bytes] | None:
        """The artifact's metadata and content, or None."""
        ...


class ArtifactStore:
    """Content-addressed artifacts on one backend, sealed by `sealer` (in clear by default)."""

    def __init__(self, blobs: Blobs, sealer: Sealer | None = None) -> None:
        self.blobs = blobs
        self.sealer = sealer or Sealer()

    @classmethod
    def for_data_dir(cls, data_dir: Path, sealer: Sealer | None = None) -> ArtifactStore:
        """The local store of a data dir (`<data_dir>/artifacts.db`)."""
        from .local import SqliteBlobs

        return cls(SqliteBlobs.for_data_dir(data_dir), sealer)

    @classmethod
    def from_settings(cls, settings: Settings) -> ArtifactStore:
        """The bucket of `SYNAPSE_ARTIFACTS_URL` when set, else the local store of the data dir;
        sealed with `SYNAPSE_CODEC_KEYS` when set."""
        sealer = Sealer.of(settings.temporal.codec_keys)
        if settings.artifacts.url is None:
            return cls.for_data_dir(settings.data_dir, sealer)
        from .s3 import S3Blobs

        return cls(S3Blobs.from_settings(settings.artifacts), sealer)

    def put(
        self,
        content: bytes,
        *,
        media_type: str = "application/json",
        name: str | None = None,
        owner_id: str | None = None,
    ) -> ArtifactRef:
        """Store `content` (once); its reference."""
        info = ArtifactInfo(
            artifact_id=artifact_id_of(content),
            media_type=media_type,
            size_bytes=len(content),
            name=name,
            owner_id=owner_id,
            created_at=datetime.now(UTC),
        )
        self.blobs.write(info, self.sealer.seal_bytes(content, _where(info.artifact_id)))
        return ArtifactRef(**info.model_dump(include=set(ArtifactRef.model_fields)))

    def put_json(self, value: Any, **kwargs: Any) -> ArtifactRef:
        """Store `value` as compact UTF-8 JSON."""
        data = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str).encode()
        return self.put(data, **kwargs)

    def info(self, artifact_id: str) -> ArtifactInfo:
        """What the store knows of an artifact, without its content."""
        info = self.blobs.info(artifact_id)
        if info is None:
            raise ArtifactNotFound(artifact_id)
        return info

    def get(self, artifact_id: str) -> tuple[ArtifactInfo, bytes]:
        """An artifact and its whole content."""
        found = self.blobs.read(artifact_id)
        if found is None:
            raise ArtifactNotFound(artifact_id)
        info, stored = found
        if artifact_id_of(stored) == artifact_id:  # written in clear
            return info, stored
        content = self.sealer.open_bytes(stored, _where(artifact_id))
        return info.model_copy(update={"size_bytes": len(content)}), content

    def get_json(self, artifact_id: str) -> Any:
        """An artifact stored as JSON, decoded."""
        return json.loads(self.get(artifact_id)[1])


def _where(artifact_id: str) -> str:
    """Where an artifact's sealed content belongs (authenticated with it)."""
    return f"artifacts.content:{artifact_id}"
