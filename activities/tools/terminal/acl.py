"""The workspace made writable to the sandbox's user by POSIX ACLs, its files' owners unchanged.

A worker running as root runs its sandboxed commands as an unprivileged uid of their own
(`confinement`), which cannot write a workspace root owns. Changing the owner would make root's own
git refuse the repository ("dubious ownership") and take the files from whoever owns them; an ACL
entry `user:<uid>:rwX` on every folder and file adds the sandbox's user beside them, and a default
entry on every folder gives it what root and `full` commands create there later (as far as the mode
they create it with allows: a file made 0644 is read-only to it, and says so). Only folders and
regular files with one link get an entry: never a symlink, a FIFO, a socket, a device, a file also
linked from elsewhere, nor anything on another file system or in `skip` (the worker's own files).
"""

from __future__ import annotations

import errno
import os
import stat
import struct
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

ACCESS, DEFAULT = "system.posix_acl_access", "system.posix_acl_default"
VERSION = 2
USER_OBJ, USER, GROUP_OBJ, GROUP, MASK, OTHER = 0x01, 0x02, 0x04, 0x08, 0x10, 0x20
UNDEFINED = 0xFFFFFFFF
ENTRY = struct.Struct("<HHI")
OPEN = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC

Entry = tuple[int, int, int]
"""An ACL entry: tag, permissions (rwx as 4, 2, 1), id (users and groups only)."""


def decode(raw: bytes) -> list[Entry]:
    """The entries of an ACL as the kernel stores it in an extended attribute."""
    return [ENTRY.unpack_from(raw, offset) for offset in range(4, len(raw), ENTRY.size)]


def encode(entries: Iterable[Entry]) -> bytes:
    """An ACL's extended attribute, its entries in the order the kernel requires."""
    ordered = sorted(entries, key=lambda entry: (entry[0], entry[2] if entry[0] in (USER, GROUP) else 0))
    return struct.pack("<I", VERSION) + b"".join(ENTRY.pack(*entry) for entry in ordered)


def from_mode(mode: int) -> list[Entry]:
    """The ACL a file's mode stands for when it has none."""
    return [
        (USER_OBJ, (mode >> 6) & 7, UNDEFINED),
        (GROUP_OBJ, (mode >> 3) & 7, UNDEFINED),
        (OTHER, mode & 7, UNDEFINED),
    ]


def with_user(entries: list[Entry], uid: int, perm: int) -> list[Entry] | None:
    """`entries` with `user:<uid>` given `perm` (and the mask recomputed as the union of the group
    class, as setfacl does); None when it already has that."""
    users = {entry[2]: entry[1] for entry in entries if entry[0] == USER}
    mask = next((entry[1] for entry in entries if entry[0] == MASK), None)
    if users.get(uid, 0) & perm == perm and mask is not None and mask & perm == perm:
        return None
    kept = [entry for entry in entries if entry[0] != MASK and not (entry[0] == USER and entry[2] == uid)]
    kept.append((USER, users.get(uid, 0) | perm, uid))
    union = 0
    for tag, bits, _ in kept:
        union |= bits if tag in (USER, GROUP_OBJ, GROUP) else 0
    return [*kept, (MASK, union, UNDEFINED)]


def _add(fd: int, name: str, uid: int, perm: int, mode: int) -> bool:
    """Give `uid` `perm` in the ACL `name` of the open file `fd`; whether it changed."""
    try:
        entries = decode(os.getxattr(fd, name))
    except OSError as err:
        if err.errno != errno.ENODATA:
            raise
        entries = from_mode(mode)
    changed = with_user(entries, uid, perm)
    if changed is not None:
        os.setxattr(fd, name, encode(changed))
    return changed is not None


@dataclass
class Granted:
    """What `grant` did."""

    changed: int = 0
    failed: int = 0
    unsupported: str | None = None
    """Why nothing could be granted (a file system without POSIX ACLs)."""


def grant(root: Path, uid: int, skip: Iterable[Path] = ()) -> Granted:
    """Let `uid` write every folder and single-linked regular file under `root` (folders: also what
    is created in them later), on `root`'s file system, but nothing under `skip`."""
    skipped = {Path(path) for path in skip}
    device = os.stat(root).st_dev
    done = Granted()
    for folder, dirs, files, at in os.fwalk(root):
        here = Path(folder)
        dirs[:] = [name for name in dirs if here / name not in skipped]
        try:
            mode = os.fstat(at).st_mode
            changed = _add(at, ACCESS, uid, 7, mode) | _add(at, DEFAULT, uid, 7, mode)
            done.changed += changed
        except OSError as err:
            if err.errno == errno.EOPNOTSUPP:
                done.unsupported = f"the file system of {here} has no POSIX ACLs ({err.strerror})"
                return done
            done.failed += 1
        for name in files:
            if here / name not in skipped:
                _file(at, name, uid, device, done)
        dirs[:] = [name for name in dirs if os.stat(name, dir_fd=at, follow_symlinks=False).st_dev == device]
    return done


def _file(at: int, name: str, uid: int, device: int, done: Granted) -> None:
    """Give `uid` rw (rwx when anyone may run it) on the regular file `name` in folder `at`."""
    try:
        if not stat.S_ISREG(os.stat(name, dir_fd=at, follow_symlinks=False).st_mode):
            return
        fd = os.open(name, OPEN, dir_fd=at)
    except OSError:
        done.failed += 1
        return
    try:
        info = os.fstat(fd)
        if stat.S_ISREG(info.st_mode) and info.st_nlink == 1 and info.st_dev == device:
            done.changed += _add(fd, ACCESS, uid, 6 | (1 if info.st_mode & 0o111 else 0), info.st_mode)
    except OSError:
        done.failed += 1
    finally:
        os.close(fd)
