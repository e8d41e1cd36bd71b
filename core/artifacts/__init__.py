"""Artifacts: large content stored once, out of workflow history, and referenced by id.

`ArtifactStore` keeps content by its SHA-256, in one SQLite file under the data dir
(`local.py`) or an S3-compatible bucket (`s3.py`);
`summary` makes bounded views of it; `claim_check` plugs the same store into Temporal's data
converter, so any payload too large for history is stored here and only referenced there.
"""

from .claim_check import ArtifactStorageDriver, data_converter
from .store import ArtifactNotFound, ArtifactStorageUnavailable, ArtifactStore
from .summary import preview_text, summarize

__all__ = [
    "ArtifactNotFound",
    "ArtifactStorageDriver",
    "ArtifactStorageUnavailable",
    "ArtifactStore",
    "data_converter",
    "preview_text",
    "summarize",
]
