"""What a terminal command is: its text from the call's arguments, its words, and what it may not contain."""

from __future__ import annotations

import re
import shlex
import unicodedata
from typing import Any

_TERMINAL = re.compile(r"[\x00-\x09\x0b-\x1f\x7f-\x9f]")
"""C0 (a newline excepted), DEL and C1: typed into a terminal they act on the terminal or its line
editor (Ctrl-U erases, Ctrl-C interrupts, Tab completes, CSI moves the cursor) instead of being part
of the command."""
_UNSEEN = re.compile(r"[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]")
"""Direction marks, embeddings, overrides and isolates, line and paragraph separators: the command
reads differently from what runs (an override shows the words after it in another order, a
separator starts a line that is none to the shell), on an approval card too."""
CONTROL = re.compile(f"{_TERMINAL.pattern}|{_UNSEEN.pattern}")
"""Control characters in a command (a newline excepted): people reading it on an approval card
cannot see them, or cannot see what they do; such a command never runs."""


def command_of(arguments: dict[str, Any]) -> str | None:
    """The `command` argument when it is a non-empty string."""
    command = arguments.get("command")
    return command.strip() if isinstance(command, str) and command.strip() else None


def unusable(arguments: dict[str, Any]) -> str | None:
    """Why the call's command cannot run at all (None: it can be asked for, or run)."""
    command = command_of(arguments)
    if command is None:
        return "terminal needs `command`: a non-empty string"
    found = CONTROL.search(command)
    if found is None:
        return None
    char = found.group()
    name = unicodedata.name(char, "")
    why = (
        "in a terminal it would act on the terminal, not be part of the command"
        if _TERMINAL.fullmatch(char)
        else "it changes how the command reads, on the approval card too, without being seen"
    )
    return (
        f"the command contains the control character U+{ord(char):04X}{f' ({name})' if name else ''} "
        f"at position {found.start()}: {why}"
    )


def words_of(command: str) -> list[str] | None:
    """The command's words as the shell would split them (None: unbalanced quotes)."""
    try:
        return shlex.split(command)
    except ValueError:
        return None
