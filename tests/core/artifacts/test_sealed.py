"""With SYNAPSE_CODEC_KEYS, both artifact backends hold content sealed, under the id of the content
in clear: still stored once, read back whole, readable after rotation and when written before."""

from __future__ import annotations

import base64
import hashlib
import os
import sqlite3
from pathlib import Path

import pytest

from core.artifacts import ArtifactStore
from core.at_rest import MAGIC
from core.settings import Settings, TemporalSettings

from ...fakes.s3 import FakeBucket

OLD = f"k1:{base64.b64encode(os.urandom(32)).decode()}"
NEW = f"k2:{base64.b64encode(os.urandom(32)).decode()}"
PAGE = ("2026-11-22 iban DE44 5001 0517 5407 3249 31 paid\n" * 500).encode()


class Backend:
    """A backend chosen by settings, and what it holds read as an operator would."""

    def __init__(self, kind: str, tmp_path: Path, bucket: FakeBucket | None) -> None:
        self.kind, self.tmp_path, self.bucket = kind, tmp_path, bucket

    def store(self, codec_keys: str | None) -> ArtifactStore:
        """The store the worker and the API would open with these keys."""
        artifacts = self.bucket.settings("team-a/") if self.bucket else Settings().artifacts
        return ArtifactStore.from_settings(
            Settings(
                data_dir=self.tmp_path,
                artifacts=artifacts,
                temporal=TemporalSettings(codec_keys=codec_keys),
                _env_file=None,
            )
        )

    def held(self) -> bytes:
        """Every byte the backend keeps (the SQLite file and its WAL, or every object)."""
        if self.bucket is None:
            return b"".join(p.read_bytes() for p in sorted(self.tmp_path.glob("artifacts.db*")))
        client = self.bucket.client()
        return b"".join(
            client.get_object(Bucket=self.bucket.name, Key=key)["Body"].read() for key in self.bucket.keys()
        )

    def count(self) -> int:
        """Artifacts kept."""
        if self.bucket is not None:
            return len(self.bucket.keys())
        with sqlite3.connect(self.tmp_path / "artifacts.db") as db:
            found: int = db.execute("SELECT COUNT(*) FROM artifacts").fetchone()[0]
        return found


@pytest.fixture(params=["local", "s3"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Backend:
    bucket = request.getfixturevalue("s3") if request.param == "s3" else None
    return Backend(request.param, tmp_path, bucket)


def test_content_is_held_sealed_under_the_id_of_its_clear_content(backend: Backend) -> None:
    store = backend.store(OLD)

    ref = store.put(PAGE, media_type="text/plain", name="statement.txt")
    again = store.put(PAGE, media_type="text/plain", name="statement.txt")

    assert ref.artifact_id == "art_" + hashlib.sha256(PAGE).hexdigest() == again.artifact_id
    assert backend.count() == 1, "the same content is kept once"
    assert b"DE44 5001" not in backend.held() and MAGIC in backend.held()
    info, content = store.get(ref.artifact_id)
    assert content == PAGE and info.size_bytes == len(PAGE) == store.info(ref.artifact_id).size_bytes
    assert store.get_json(store.put_json({"answer": "DE44"}).artifact_id) == {"answer": "DE44"}


def test_after_rotation_content_sealed_under_the_old_key_still_reads(backend: Backend) -> None:
    ref = backend.store(OLD).put(PAGE)

    assert backend.store(f"{NEW},{OLD}").get(ref.artifact_id)[1] == PAGE
    with pytest.raises(ValueError, match=f"artifacts.content:{ref.artifact_id} encrypted with key 'k1'"):
        backend.store(NEW).get(ref.artifact_id)


@pytest.mark.parametrize("content", [PAGE, MAGIC + b"\x02k1" + b"looks sealed, is not" * 3])
def test_content_written_before_keys_were_set_reads_as_it_is(backend: Backend, content: bytes) -> None:
    ref = backend.store(None).put(content)
    assert content[:40] in backend.held(), "the control: written in clear"

    assert backend.store(OLD).get(ref.artifact_id)[1] == content
