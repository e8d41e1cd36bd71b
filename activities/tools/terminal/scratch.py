"""A terminal's private files: what goes into and comes out of its sandboxes, beside the commands.

They live in the worker's data dir, which no sandbox shows; the lines typed into the terminal name
them absolutely, and bwrap and the scripts inside the sandbox open them by file descriptor.
"""

from __future__ import annotations

import grp
import os
import pwd
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any


def _name(lookup: Callable[[int], Any], number: int) -> str:
    """The name of a user or group id (the id itself when it has none)."""
    try:
        return str(lookup(number)[0])
    except KeyError:
        return str(number)


@dataclass(frozen=True)
class Scratch:
    """A terminal's private files: in the worker's data dir, which no sandbox shows."""

    folder: Path

    @property
    def args(self) -> Path:
        """bwrap's arguments for the next command, NUL-separated (`--args`)."""
        return self.folder / "args"

    @property
    def words(self) -> Path:
        """The next command: its words NUL-separated (free), or its text (approved)."""
        return self.folder / "words"

    @property
    def status(self) -> Path:
        """bwrap's JSON status (`--json-status-fd`): an `exit-code` once the command ran."""
        return self.folder / "status.json"

    @property
    def overlay(self) -> Path:
        """The exports earlier sandboxed commands made, sourced inside the next one (`carry.Overlay`)."""
        return self.folder / "overlay"

    @property
    def state(self) -> Path:
        """What an approved sandboxed command leaves: exports before, then folder and exports after."""
        return self.folder / "state"

    @property
    def passwd(self) -> Path:
        """The worker's own user alone, as `/etc/passwd` of a free sandbox (`ls -l`, `whoami`)."""
        return self.folder / "passwd"

    @property
    def group(self) -> Path:
        """The worker's own group alone, as `/etc/group` of a free sandbox."""
        return self.folder / "group"

    def prepare(self) -> None:
        """Write who the worker is, and nobody else, for the free sandbox to show."""
        uid, gid = os.getuid(), os.getgid()
        user, group = _name(pwd.getpwuid, uid), _name(grp.getgrgid, gid)
        self.passwd.write_text(f"{user}:x:{uid}:{gid}:{user}:/nonexistent:/usr/sbin/nologin\n")
        self.group.write_text(f"{group}:x:{gid}:\n")

    @property
    def apply(self) -> Path:
        """The lines that carry that into the session's shell (`carry`), read by `source`."""
        return self.folder / "apply"

    def started(self) -> bool:
        """Whether the last sandboxed command got past the sandbox's set-up and ran to its end."""
        try:
            return '"exit-code"' in self.status.read_text()
        except OSError:
            return False
