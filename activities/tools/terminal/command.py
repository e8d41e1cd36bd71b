"""What a terminal command is: its text from the call's arguments, its words, and what it may not contain."""

from __future__ import annotations

import re
import shlex
from typing import Any

CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f\x7f-\x9f]")
"""Control characters (a newline excepted): typed into a terminal they act on the terminal or its line
editor (Ctrl-U erases, Ctrl-C interrupts, Tab completes) instead of being part of the command, and
people reading the command on an approval card cannot see them."""


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
    if found is not None:
        return (
            f"the command contains the control character U+{ord(found.group()):04X} at position "
            f"{found.start()}: in a terminal it would act on the terminal, not be part of the command"
        )
    return None


def words_of(command: str) -> list[str] | None:
    """The command's words as the shell would split them (None: unbalanced quotes)."""
    try:
        return shlex.split(command)
    except ValueError:
        return None
