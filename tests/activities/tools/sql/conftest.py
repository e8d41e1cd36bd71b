"""The databases the `sql` tool's tests run on: SQLite, and PostgreSQL (tests/postgres.py; skipped,
saying why, without it)."""

from __future__ import annotations

from pathlib import Path

import pytest

BACKENDS = ["sqlite", "postgresql"]


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    """The database the tool runs on: each test that uses `url` runs on both."""
    return str(request.param)


@pytest.fixture
def url(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> str:
    """A new database: a SQLite file in a directory that does not exist yet, or one on PostgreSQL."""
    if backend == "sqlite":
        return f"sqlite:///{tmp_path / 'data' / 'demo.db'}"
    postgres_url: str = request.getfixturevalue("postgres_url")
    return postgres_url
