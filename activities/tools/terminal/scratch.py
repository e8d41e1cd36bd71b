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

SANDBOX_USER = "sandbox"
"""The name a free sandbox gives its own user and group when the host has none for them."""


def _name(lookup: Callable[[int], Any], number: int, unnamed: str | None = None) -> str:
    """The name of a user or group id (`unnamed`, else the id itself, when it has none)."""
    try:
        return str(lookup(number)[0])
    except KeyError:
        return unnamed or str(number)


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
        """The sandbox's user and the worker's, as `/etc/passwd` of a free sandbox (`ls -l`, `whoami`)."""
        return self.folder / "passwd"

    @property
    def group(self) -> Path:
        """Their groups, as `/etc/group` of a free sandbox."""
        return self.folder / "group"

    @property
    def seccomp(self) -> Path:
        """The sandbox's seccomp filter, read by bwrap (`--seccomp`)."""
        return self.folder / "seccomp"

    def identify(self, uid: int, gid: int) -> None:
        """Write (once) who a free sandbox's command is, `uid` and `gid` (`sandbox` unless the host
        names them), and who the worker is (the owner of what it is shown, when not the same), and
        nobody else, for the free sandbox to show."""
        if self.passwd.exists():
            return
        users = {uid: (_name(pwd.getpwuid, uid, SANDBOX_USER), gid)}
        users.setdefault(os.getuid(), (_name(pwd.getpwuid, os.getuid()), os.getgid()))
        groups = {gid: _name(grp.getgrgid, gid, SANDBOX_USER)}
        groups.setdefault(os.getgid(), _name(grp.getgrgid, os.getgid()))
        self.group.write_text("".join(f"{name}:x:{number}:\n" for number, name in groups.items()))
        self.group.chmod(0o644)  # the sandbox's user reads them, whatever the worker's umask
        self.passwd.write_text(
            "".join(
                f"{name}:x:{number}:{group}:{name}:/nonexistent:/usr/sbin/nologin\n"
                for number, (name, group) in users.items()
            )
        )
        self.passwd.chmod(0o644)

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
