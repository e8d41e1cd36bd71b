"""Artifacts: large content kept out of workflow history, referenced by id."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field

from .base import Contract

ARTIFACT_ID_PATTERN = r"^art_[0-9a-f]{64}$"
"""`art_` plus the SHA-256 of the content: the same content always has the same id."""


class ArtifactRef(Contract):
    """Where the whole of something large is kept; history and the stream carry only a preview."""

    artifact_id: str = Field(pattern=ARTIFACT_ID_PATTERN, description="`art_<sha256 of the content>`.")
    media_type: str = Field(default="application/json", description="What the content is.")
    size_bytes: int = Field(ge=0, description="Size of the whole content.")
    name: str | None = Field(default=None, description="A file name or label, when there is one.")


class ArtifactInfo(ArtifactRef):
    """An artifact as the store knows it (`HEAD`-like metadata)."""

    created_at: datetime = Field(description="When it was first stored (UTC).")
    owner_id: str | None = Field(default=None, description="Workflow id that stored it first, if any.")


ArtifactMode = Literal["FULL", "SUMMARY"]
"""How an artifact enters an agent's context: whole, or a bounded head and tail with sizes."""
