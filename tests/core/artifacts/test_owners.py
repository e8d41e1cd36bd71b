"""An artifact's owners (projects and workflows) are kept beside it on both backends, by every
writer: an upload's project, an offloaded result's or an archived page's workflow."""

from __future__ import annotations

from pathlib import Path

from activities.artifacts.archive import ArchiveActivities
from activities.artifacts.offload import Offloader
from contracts import ArchivePage
from core.artifacts import ArtifactStore
from core.artifacts.owners import ArtifactOwners, Ownership
from core.settings import Settings

from ...fakes.s3 import FakeBucket


def test_owners_accumulate_once_each_and_stay_with_their_artifact(store: ArtifactStore) -> None:
    owners = ArtifactOwners.beside(store)
    one, other = store.put(b"price list").artifact_id, store.put(b"ledger").artifact_id
    assert owners.of(one) == Ownership()

    for _ in range(2):  # a retried writer adds nothing
        owners.add_project(one, "shop")
        owners.add_workflow(one, "graph:0b1/task:9f/v1/0")
    owners.add_project(one, "营业 shop/eu")  # any name a key may give, quoted where it must be
    owners.add_workflow(other, "session:ops")

    assert owners.of(one) == Ownership(
        projects=frozenset({"shop", "营业 shop/eu"}), workflows=frozenset({"graph:0b1/task:9f/v1/0"})
    )
    assert ArtifactOwners.beside(store).of(other) == Ownership(workflows=frozenset({"session:ops"}))


def test_the_local_owners_live_beside_the_artifacts_and_the_bucket_keeps_its_own(
    tmp_path: Path, s3: FakeBucket
) -> None:
    local = ArtifactStore.from_settings(Settings(data_dir=tmp_path, _env_file=None))
    ArtifactOwners.beside(local).add_project(local.put(b"x").artifact_id, "shop")
    assert sorted(p.name for p in tmp_path.glob("*.db")) == ["artifact_owners.db", "artifacts.db"]

    bucket = ArtifactStore.from_settings(
        Settings(data_dir=tmp_path / "s3", artifacts=s3.settings("team-a/"), _env_file=None)
    )
    ref = bucket.put(b"y")
    ArtifactOwners.beside(bucket).add_workflow(ref.artifact_id, "session:ops")
    assert sorted(s3.keys()) == [
        f"team-a/{ref.artifact_id}",
        f"team-a/owners/{ref.artifact_id}/workflow/session%3Aops",
    ]
    assert not (tmp_path / "s3").exists(), "nothing is kept on this machine"


async def test_offloading_and_archiving_record_the_workflow_they_store_for(store: ArtifactStore) -> None:
    owners = ArtifactOwners.beside(store)
    _, answer = await Offloader(store, inline_bytes=10).offload(
        "a long answer " * 10, name="demo answer", owner_id="graph:0b1/task:9f/v1/0"
    )
    page = await ArchiveActivities(store).archive_page(
        ArchivePage(kind="messages", owner_id="session:shop-1", start=0, items=["hi", "hello"])
    )
    assert owners.of(answer.artifact_id) == Ownership(workflows=frozenset({"graph:0b1/task:9f/v1/0"}))
    assert owners.of(page.artifact_id) == Ownership(workflows=frozenset({"session:shop-1"}))


def test_a_name_too_long_for_an_object_key_is_kept_and_read_back(tmp_path: Path, s3: FakeBucket) -> None:
    """A project may be 1,000 characters; quoted, that passes S3's 1,024-byte keys, so such a name
    is kept inside its marker object, which is named by the name's hash."""
    bucket = ArtifactStore.from_settings(
        Settings(data_dir=tmp_path, artifacts=s3.settings("team-a/"), _env_file=None)
    )
    owners, artifact = ArtifactOwners.beside(bucket), bucket.put(b"y").artifact_id
    long_names = ("营" * 1000, "#" + "a" * 999)
    for name in (*long_names, "#short"):
        owners.add_project(artifact, name)
    assert owners.of(artifact) == Ownership(projects=frozenset({*long_names, "#short"}))
    assert max(len(key.encode()) for key in s3.keys()) < 1024
