"""Trusted folders: `@path` attaches files only from folders the user said to trust.

A path is inside a trusted folder when, with links followed, it lies at or below one. The folder a
user is offered to trust for a path is the project it belongs to (its nearest folder with `.git`
or `.synapse/`), or else the folder it is in.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from .places import project_root


def trusted_folder(path: Path, folders: Iterable[str]) -> Path | None:
    """The trusted folder `path` lies in (links followed), or None."""
    real = path.resolve()
    for folder in folders:
        root = Path(folder).expanduser().resolve()
        if real == root or real.is_relative_to(root):
            return root
    return None


def folder_to_trust(path: Path) -> Path:
    """What to offer to trust so that `path` can be attached: its project, else its folder."""
    real = path.resolve()
    return project_root(real if real.is_dir() else real.parent)
