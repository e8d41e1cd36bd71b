"""The workspace made writable to the sandbox's user by ACL entries, owners unchanged (`acl`)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from activities.tools.terminal import acl

UID = 60001


def _user_entry(path: Path, name: str = acl.ACCESS) -> tuple[int, int, int] | None:
    try:
        entries = acl.decode(os.getxattr(path, name, follow_symlinks=False))
    except OSError:
        return None
    return next((entry for entry in entries if entry[0] == acl.USER and entry[2] == UID), None)


def test_an_entry_is_added_beside_the_mode_and_the_mask_lets_it_through() -> None:
    entries = acl.with_user(acl.from_mode(0o640), UID, 6)
    assert entries is not None
    assert acl.decode(acl.encode(entries)) == [
        (acl.USER_OBJ, 6, acl.UNDEFINED),
        (acl.USER, 6, UID),
        (acl.GROUP_OBJ, 4, acl.UNDEFINED),
        (acl.MASK, 6, acl.UNDEFINED),
        (acl.OTHER, 0, acl.UNDEFINED),
    ], "the owning group keeps r (its entry), others nothing"
    assert acl.with_user(entries, UID, 6) is None, "nothing to change a second time"


def test_folders_and_single_linked_files_are_granted_nothing_else(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / "sub").mkdir(parents=True)
    (root / "file.txt").write_text("x")
    (root / "run.sh").write_text("x")
    (root / "run.sh").chmod(0o755)
    (root / "sub" / "deep.txt").write_text("x")
    os.mkfifo(root / "pipe")
    (root / "link").symlink_to("/etc/passwd")
    (tmp_path / "elsewhere.txt").write_text("x")
    os.link(tmp_path / "elsewhere.txt", root / "hardlink.txt")
    (root / ".synapse").mkdir()
    (root / ".synapse" / "secret.txt").write_text("x")
    try:
        done = acl.grant(root, UID, skip=[root / ".synapse"])
    except OSError as err:  # pragma: no cover - a file system without ACLs
        pytest.skip(f"no POSIX ACLs on {tmp_path}: {err}")
    if done.unsupported:
        pytest.skip(done.unsupported)
    assert done.failed == 0
    assert _user_entry(root) == (acl.USER, 7, UID) and _user_entry(root, acl.DEFAULT) == (acl.USER, 7, UID)
    assert _user_entry(root / "sub" / "deep.txt") == (acl.USER, 6, UID)
    assert _user_entry(root / "run.sh") == (acl.USER, 7, UID), "runnable stays runnable"
    for untouched in ("pipe", "hardlink.txt", ".synapse", ".synapse/secret.txt"):
        assert _user_entry(root / untouched) is None, untouched
    assert _user_entry(Path("/etc/passwd")) is None, "a symlink is never followed"
    assert (root / "file.txt").stat().st_uid == os.getuid(), "owners stay"
    later = root / "sub" / "later.txt"
    later.write_text("made by the worker after")
    inherited = _user_entry(later)
    assert inherited is not None and inherited[1] & 6 == 6, "from the folder's default entry"
    assert acl.grant(root, UID, skip=[root / ".synapse"]).changed == 0, "a second start changes nothing"
