"""The artifact store of each backend, for the tests of this folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.artifacts import ArtifactStore
from core.settings import Settings

from ...fakes.s3 import FakeBucket


@pytest.fixture(params=["local", "s3"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> ArtifactStore:
    """The store of each backend, chosen by settings as the worker and the API choose it."""
    if request.param == "local":
        return ArtifactStore.from_settings(Settings(data_dir=tmp_path, _env_file=None))
    bucket: FakeBucket = request.getfixturevalue("s3")
    return ArtifactStore.from_settings(
        Settings(data_dir=tmp_path, artifacts=bucket.settings("team-a/"), _env_file=None)
    )
