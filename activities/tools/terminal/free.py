"""Which terminal commands may run without approval: the first filter before the sandbox.

A command is free only when nothing in it can run other code (`code.runs_code`: `find -exec`,
`find -fprintf`, ...), its program is on the read-only allowlist, it uses no shell syntax,
the terminal is in a trusted folder, and every path it names lies in a trusted folder once
resolved against the folder the terminal is really in (symlinks followed). Even then it runs
only inside the read-only sandbox (`sandbox.Sandbox.free_line`): these rules decide what is worth
asking about; the sandbox is what makes a free command harmless.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path

from . import git_free
from .code import asks_every_time, runs_code
from .command import CONTROL, words_of

SHELL_SYNTAX = re.compile(r"[;&|<>`$(){}\n\\*?\[\]!#]")
"""Pipes, redirects, substitutions, globs, history, comments: a free command is one program and its words."""


def _paths_named(words: list[str]) -> list[str]:
    """The words that name a file: anything with a `/` or starting with `~` or `.`, the value of a
    `--option=value`, and what could be the value glued to a short option (`_glued`)."""
    named = []
    for word in words:
        value = word.split("=", 1)[1] if word.startswith("--") and "=" in word else word
        named += [found for found in [value, *_glued(word)] if _looks_like_path(found)]
    return named


def _glued(word: str) -> list[str]:
    """What a word of short options could end with as an option's value: `-f/etc/x` is `-f /etc/x`
    to `grep`, and `-rf/etc` may be `-r -f /etc`; which letters take a value depends on the
    program, so every tail after an option letter counts, up to the first character that is no
    letter or digit (the rest is one value)."""
    if not word.startswith("-") or word.startswith("--"):
        return []
    tails = []
    for at in range(2, len(word)):
        tails.append(word[at:])
        if not word[at].isalnum():
            break
    return tails


def _looks_like_path(value: str) -> bool:
    return "/" in value or value.startswith(("~", "."))


class FreeRules:
    """The allowlist and the trusted folders."""

    def __init__(self, allow: Iterable[str], trusted: Iterable[Path]) -> None:
        """`allow`: program names; `trusted`: folders (resolved here)."""
        self.allow = frozenset(allow)
        self.trusted = tuple(Path(folder).resolve() for folder in trusted)

    def _trusted(self, path: Path) -> bool:
        return any(path == folder or folder in path.parents for folder in self.trusted)

    def why_not(self, command: str, cwd: Path) -> str | None:
        """Why `command`, run in `cwd`, needs approval; None when it may run free (sandboxed)."""
        if CONTROL.search(command):
            return "the command contains a control character"
        words = words_of(command)
        if not words:
            return "the command cannot be split into words (unbalanced quotes)"
        if (code := runs_code(words)) is not None:
            return asks_every_time(code)
        program = words[0]
        if program not in self.allow:
            return f"`{program}` is not on the read-only allowlist"
        if SHELL_SYNTAX.search(command):
            return "the command uses shell syntax (pipes, redirects, substitutions, globs, variables)"
        where = cwd.resolve()
        if not self._trusted(where):
            return f"the terminal is in {where}, outside the trusted folders"
        for named in _paths_named(words[1:]):
            path = (where / os.path.expanduser(named)).resolve()
            if not self._trusted(path):
                return f"`{named}` is {path}, outside the trusted folders"
        if program == "git":
            return git_free.why_not(words[1:], where, self.trusted)
        return None

    def words(self, words: list[str]) -> list[str]:
        """A free command's words as they run (`git` with its guards: `git_free.free_words`)."""
        return git_free.free_words(words) if words[0] == "git" else words
