"""Where things are: the user's Synapse folder (under `$HOME`) and the project a REPL works in."""

from __future__ import annotations

import os
from pathlib import Path

PROJECT_MARKERS = (".git", ".synapse")
"""A folder holding one of these is a project root."""


def home() -> Path:
    """The user's home: `$HOME` when set (tests point it elsewhere), else what the system says."""
    return Path(os.environ.get("HOME") or Path.home())


def user_dir() -> Path:
    """`~/.synapse`: the user's settings, history and saved chats."""
    return home() / ".synapse"


def project_root(start: Path | None = None) -> Path:
    """The nearest folder at or above `start` (default: the cwd) holding `.git` or `.synapse/`;
    `start` itself when there is none. The user's home is never a project because of its own
    `~/.synapse` (that is the user's folder)."""
    here = (start or Path.cwd()).resolve()
    user = home().resolve()
    for folder in (here, *here.parents):
        if folder == user:
            if (folder / ".git").exists():
                return folder
            continue
        if any((folder / marker).exists() for marker in PROJECT_MARKERS):
            return folder
    return here


def shown(path: Path) -> str:
    """A path as people read it: under the home folder as `~/...`."""
    try:
        return "~/" + str(path.relative_to(home())) if path != home() else "~"
    except ValueError:
        return str(path)
