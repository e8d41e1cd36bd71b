"""The artifact store behaves the same on its two backends: the data dir's SQLite file and an
S3-compatible bucket (boto3 against a loopback S3)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from temporalio.client import Client

from core.artifacts import ArtifactNotFound, ArtifactStorageUnavailable, ArtifactStore
from core.connect import connect_client
from core.settings import ArtifactSettings, Settings

from ...fakes.s3 import CREDENTIALS, FakeBucket
from ...support import free_port


def test_content_is_kept_once_and_read_back_whole(store: ArtifactStore) -> None:
    content = ("2026-11-22 ERROR disk full on /var\n" * 20_000).encode()

    first = store.put(content, media_type="text/plain", name="周报 app.log", owner_id="session:ops")
    again = store.put(content, media_type="text/plain", name="other.log")

    assert first == again.model_copy(update={"name": "周报 app.log"}), "the same content, the same id"
    info, read = store.get(first.artifact_id)
    assert read == content
    assert (info.name, info.owner_id, info.media_type) == ("周报 app.log", "session:ops", "text/plain")
    assert info.size_bytes == len(content) == store.info(first.artifact_id).size_bytes
    assert store.get_json(store.put_json({"rows": [[1, "a"]]}).artifact_id) == {"rows": [[1, "a"]]}


def test_an_unknown_id_is_not_found(store: ArtifactStore) -> None:
    missing = "art_" + "0" * 64
    with pytest.raises(ArtifactNotFound, match=missing):
        store.get(missing)
    with pytest.raises(ArtifactNotFound):
        store.info(missing)


def test_objects_live_under_the_prefix(s3: FakeBucket, tmp_path: Path) -> None:
    store = ArtifactStore.from_settings(
        Settings(data_dir=tmp_path, artifacts=s3.settings("team-a"), _env_file=None)
    )
    ref = store.put(b"hello")
    assert s3.keys() == [f"team-a/{ref.artifact_id}"]
    assert not (tmp_path / "artifacts.db").exists(), "nothing is kept on this machine"


def test_an_unreachable_bucket_says_where_it_is(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name, value in CREDENTIALS.items():
        monkeypatch.setenv(name, value)
    nowhere = ArtifactSettings(url="s3://synapse-bucket/x", s3_endpoint_url=f"http://127.0.0.1:{free_port()}")
    store = ArtifactStore.from_settings(Settings(data_dir=tmp_path, artifacts=nowhere, _env_file=None))
    with pytest.raises(ArtifactStorageUnavailable, match=r"artifact storage s3://synapse-bucket/x/"):
        store.put(b"hello")


def test_a_bucket_url_must_be_an_s3_url() -> None:
    with pytest.raises(ValueError, match="url"):
        ArtifactSettings(url="https://example.invalid/bucket")


async def test_the_claim_check_keeps_large_payloads_in_the_bucket(
    s3: FakeBucket, client: Client, tmp_path: Path
) -> None:
    env = {"TEMPORAL_ADDRESS": client.service_client.config.target_host, "TEMPORAL_CONFIG_FILE": os.devnull}
    settings = Settings(data_dir=tmp_path, artifacts=s3.settings("payloads/"), _env_file=None)

    connected = await connect_client(settings, env=env)

    big = await connected.data_converter.encode(["x" * 300_000])
    assert big[0].ByteSize() < 1024, "history would hold only a reference"
    assert len(s3.keys()) == 1 and s3.keys()[0].startswith("payloads/art_")
    assert await connected.data_converter.decode(big, [str]) == ["x" * 300_000]
