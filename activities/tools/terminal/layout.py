"""The order of a sandbox's mounts, and the folders bwrap makes on the way to them."""

from __future__ import annotations

from pathlib import Path

TMP = Path("/tmp")
TMPS = (TMP, Path("/var/tmp"))
"""Folders every approved sandbox has a writable one of its own of (a tmpfs, gone with it)."""
OPEN_FOLDER = ("--perms", "0755", "--dir")
"""A folder bwrap makes inside a sandbox, open to the sandbox's user (bwrap's own are 0700)."""


def layered(binds: list[tuple[Path, list[str]]], covers: list[tuple[Path, list[str]]]) -> list[str]:
    """Mounts in an order where each lands on what it should: outer paths first, so a folder shown
    inside a covered one (the workspace under /tmp) is mounted over the cover, and a cover inside a
    shown folder (the data dir in the workspace) over the folder; a cover wins over a bind of the
    same path. The folders bwrap makes on the way to a mount are open to all (bwrap makes them 0700,
    which the sandbox's user could not pass); existing ones stay as they are. Covering folders become
    read-only once everything is mounted."""
    ways = {parent for path, _ in [*binds, *covers] for parent in path.parents if parent != parent.parent}
    ordered = sorted(
        [(len(path.parts), -1, path, [*OPEN_FOLDER, str(path)]) for path in ways]
        + [(len(path.parts), 0, path, words) for path, words in binds]
        + [(len(path.parts), 1, path, words) for path, words in covers],
        key=lambda entry: (entry[0], entry[1], str(entry[2])),
    )
    sealed = [
        word
        for path, words in covers
        if words[0] == "--tmpfs" and path not in TMPS
        for word in ("--remount-ro", str(path))
    ]
    return [*(word for *_, words in ordered for word in words), *sealed]
