"""What an approved sandboxed command leaves behind: the folder it ended in, and its exports.

The command runs in a bash of its own inside the sandbox, which writes (`inside.RUN_COMMAND`) the
exports it started with, an empty entry, then the folder (physical) and the exports it ended with,
all NUL-separated. Here that is read:
- the folder becomes a `cd` of the session's shell (a script it reads with `source`: never typed);
- the exports become the terminal's `Overlay`, which later *sandboxed* commands start with. They
  never reach the session's shell, so a sandboxed command cannot change what the shell, or a later
  command approved without a sandbox, runs (PROMPT_COMMAND, PATH, LD_PRELOAD, GIT_CONFIG_*, ...).
Shell functions, aliases and unexported variables stay inside, like anything else the sandbox held.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field

NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
KEPT_IN = re.compile(
    r"BASH.*|SHELLOPTS|IFS|PS[0-4]|PPID|UID|EUID|PWD|OLDPWD|SHLVL|_|__synapse.*|TERM|LINES|COLUMNS"
)
"""Names never carried: a bash's own (read-only, or set by every bash), and Synapse's."""


@dataclass
class Carried:
    """What a sandboxed command changed."""

    cwd: str | None = None
    exports: dict[str, str] = field(default_factory=dict)
    unsets: list[str] = field(default_factory=list)

    def cd(self) -> str | None:
        """Shell that moves the session's shell to the folder, for `source` (None: nowhere to go)."""
        return f"builtin cd -P -- {shlex.quote(self.cwd)} 2>/dev/null\n" if self.cwd else None


@dataclass
class Overlay:
    """The exports sandboxed commands made, which later sandboxed commands of the terminal start with."""

    changes: dict[str, str | None] = field(default_factory=dict)
    """Name → value, or None where a sandboxed command unset it."""

    def take(self, carried: Carried) -> None:
        """Add what a command changed."""
        self.changes.update(carried.exports)
        self.changes.update(dict.fromkeys(carried.unsets))

    def script(self) -> str:
        """Shell that sets them, read with `source` inside the next sandbox (values quoted)."""
        return "".join(
            f"unset -v -- {name}\n" if value is None else f"export -- {shlex.quote(f'{name}={value}')}\n"
            for name, value in self.changes.items()
        )


def _entries(data: bytes) -> dict[str, str]:
    """`NAME=value` entries whose name may be carried (a value that is not UTF-8 is not)."""
    found: dict[str, str] = {}
    for entry in data.split(b"\0"):
        try:
            name, sep, value = entry.decode("utf-8").partition("=")
        except UnicodeDecodeError:
            continue
        if sep and NAME.fullmatch(name) and not KEPT_IN.fullmatch(name):
            found[name] = value
    return found


def read(data: bytes) -> Carried:
    """The changes in a state file: nothing unless the command ran to its end and wrote it all."""
    if data.startswith(b"\0"):  # it started with no exports at all
        before, sep, after = b"", b"\0", data[1:]
    else:  # entries are never empty: the first empty one ends them
        before, sep, after = data.partition(b"\0\0")
    if not sep or not after:  # killed before its exit trap: the shell stays as it was
        return Carried()
    cwd, _, exports = after.partition(b"\0")
    folder = cwd.decode("utf-8", "replace")
    old, new = _entries(before + b"\0"), _entries(exports)
    return Carried(
        cwd=folder if folder.startswith("/") and "\n" not in folder else None,
        exports={name: value for name, value in new.items() if old.get(name) != value},
        unsets=sorted(name for name in old if name not in new),
    )
