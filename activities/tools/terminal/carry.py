"""What an approved sandboxed command leaves behind for the session's shell: its folder and exports.

The command runs in a bash of its own inside the sandbox, which writes (`sandbox.INNER`) the
exports it started with, an empty entry, then the folder and the exports it ended with, all
NUL-separated. Here that is read and turned into one line for the session's shell (`cd`, `export`,
`unset`), every value quoted: nothing the sandbox wrote is ever run by the shell outside it.

Variables that steer the shell or the dynamic linker (PROMPT_COMMAND, PS1, BASH_ENV, IFS, LD_*,
...) are not carried: a sandboxed command must not be able to make the shell outside it run
something. Shell functions, aliases and unexported variables stay inside, like anything else the
sandbox held.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field

NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
KEPT_IN = re.compile(
    r"BASH.*|PS[0-4]|PROMPT_COMMAND|ENV|SHELLOPTS|IFS|CDPATH|GLOBIGNORE|EXECIGNORE|FIGNORE|HIST.*"
    r"|TMOUT|INPUTRC|POSIXLY_CORRECT|LD_.*|COMP_.*|READLINE_.*|PWD|OLDPWD|SHLVL|_|TERM"
)
"""Names never carried out of a sandbox (they steer the shell, the linker, or are the shell's own)."""


@dataclass
class Carried:
    """The changes to apply to the session's shell."""

    cwd: str | None = None
    exports: dict[str, str] = field(default_factory=dict)
    unsets: list[str] = field(default_factory=list)

    def line(self) -> str | None:
        """One line of shell that applies them (None: nothing to apply)."""
        parts = []
        if self.cwd:
            parts.append(f"builtin cd -- {shlex.quote(self.cwd)} 2>/dev/null")
        if self.exports:
            parts.append("export -- " + " ".join(shlex.quote(f"{k}={v}") for k, v in self.exports.items()))
        if self.unsets:
            parts.append("unset -v -- " + " ".join(self.unsets))
        return "; ".join(parts) or None


def _entries(data: bytes) -> dict[str, str]:
    found: dict[str, str] = {}
    for entry in data.split(b"\0"):
        name, sep, value = entry.decode("utf-8", "surrogateescape").partition("=")
        if sep and NAME.fullmatch(name) and not KEPT_IN.fullmatch(name):
            found[name] = value
    return found


def read(data: bytes) -> Carried:
    """The changes in a state file: nothing unless the command ran to its end and wrote it all."""
    before, sep, after = data.partition(b"\0\0")
    if not sep or not after:  # killed before its exit trap: the shell stays as it was
        return Carried()
    cwd, _, exports = after.partition(b"\0")
    old, new = _entries(before + b"\0"), _entries(exports)
    return Carried(
        cwd=cwd.decode("utf-8", "surrogateescape") or None,
        exports={name: value for name, value in new.items() if old.get(name) != value},
        unsets=sorted(name for name in old if name not in new),
    )
