"""What an approved sandboxed command leaves behind for the session's shell: its folder and exports.

The command runs in a bash of its own inside the sandbox, which writes (`sandbox.RUN_COMMAND`) the
exports it started with, an empty entry, then the folder and the exports it ended with, all
NUL-separated. Here that is read and turned into a script for the session's shell (`cd`, `export`,
`unset`) that it reads with `source`, every value quoted: nothing the sandbox wrote is ever run by
the shell outside it, and none of it is typed (a control character would act on the line editor).

Variables that steer the shell, its line editor or what later commands run (PROMPT_COMMAND, PS1,
MAILPATH, histchars, BASH_ENV, IFS, PATH, LD_*, ...) are not carried: a sandboxed command must not
be able to make the shell outside it, or a later command approved without a sandbox, run something
else. Shell functions, aliases and unexported variables stay inside, like anything else the
sandbox held.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field

NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
KEPT_IN = re.compile(
    r"BASH.*|PS[0-4]|PROMPT_COMMAND|PROMPT_DIRTRIM|ENV|SHELLOPTS|IFS|CDPATH|GLOBIGNORE|EXECIGNORE"
    r"|FIGNORE|FCEDIT|HIST.*|histchars|auto_resume|MAIL|MAILCHECK|MAILPATH|TMOUT|IGNOREEOF|INPUTRC"
    r"|TIMEFORMAT|POSIXLY_CORRECT|COMP_.*|COMPREPLY|READLINE_.*|EMACS|INSIDE_EMACS|LINES|COLUMNS"
    r"|TERM|TERMINFO|LANG|LANGUAGE|LC_.*|PATH|LD_.*|PWD|OLDPWD|SHLVL|HOME|SHELL|TMPDIR|_"
)
"""Names never carried out of a sandbox: they steer the shell, its line editor, its locale, the
linker or where programs are found, or they are the shell's own."""


@dataclass
class Carried:
    """The changes to apply to the session's shell."""

    cwd: str | None = None
    exports: dict[str, str] = field(default_factory=dict)
    unsets: list[str] = field(default_factory=list)

    def script(self) -> str | None:
        """Shell that applies them, for `source` (None: nothing to apply)."""
        lines = []
        if self.cwd:
            lines.append(f"builtin cd -- {shlex.quote(self.cwd)} 2>/dev/null")
        if self.exports:
            lines.append("export -- " + " ".join(shlex.quote(f"{k}={v}") for k, v in self.exports.items()))
        if self.unsets:
            lines.append("unset -v -- " + " ".join(self.unsets))
        return "".join(f"{line}\n" for line in lines) or None


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
    old, new = _entries(before + b"\0"), _entries(exports)
    return Carried(
        cwd=cwd.decode("utf-8", "replace") or None,
        exports={name: value for name, value in new.items() if old.get(name) != value},
        unsets=sorted(name for name in old if name not in new),
    )
