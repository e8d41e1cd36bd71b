"""What a command may not contain: control characters people cannot see on an approval card, or
that would act on the terminal. Such a command is refused before anyone is asked, naming the
character and where it is."""

from __future__ import annotations

import pytest

from activities.tools.terminal.command import unusable

TERMINAL = "in a terminal it would act on the terminal, not be part of the command"
UNSEEN = "it changes how the command reads, on the approval card too, without being seen"


@pytest.mark.parametrize(
    ("command", "said"),
    [
        ("ls \x03 rm x", f"U+0003 at position 3: {TERMINAL}"),
        ("ls\tx", f"U+0009 at position 2: {TERMINAL}"),
        ("cat \x1b[2J", f"U+001B at position 4: {TERMINAL}"),
        ("echo \x9b2J", f"U+009B at position 5: {TERMINAL}"),
        ("echo a\x85b", f"U+0085 at position 6: {TERMINAL}"),
        # direction overrides, embeddings, isolates and marks
        ("rm -rf /tmp/x\u202e/ y", f"U+202E (RIGHT-TO-LEFT OVERRIDE) at position 13: {UNSEEN}"),
        ("ls \u202d", f"U+202D (LEFT-TO-RIGHT OVERRIDE) at position 3: {UNSEEN}"),
        ("ls \u202a", f"U+202A (LEFT-TO-RIGHT EMBEDDING) at position 3: {UNSEEN}"),
        ("ls \u202bx", f"U+202B (RIGHT-TO-LEFT EMBEDDING) at position 3: {UNSEEN}"),
        ("ls x\u202c", f"U+202C (POP DIRECTIONAL FORMATTING) at position 4: {UNSEEN}"),
        ("ls \u2066x", f"U+2066 (LEFT-TO-RIGHT ISOLATE) at position 3: {UNSEEN}"),
        ("ls \u2067x", f"U+2067 (RIGHT-TO-LEFT ISOLATE) at position 3: {UNSEEN}"),
        ("ls \u2068x", f"U+2068 (FIRST STRONG ISOLATE) at position 3: {UNSEEN}"),
        ("ls x\u2069y", f"U+2069 (POP DIRECTIONAL ISOLATE) at position 4: {UNSEEN}"),
        ("ls \u200e", f"U+200E (LEFT-TO-RIGHT MARK) at position 3: {UNSEEN}"),
        ("ls \u200fx", f"U+200F (RIGHT-TO-LEFT MARK) at position 3: {UNSEEN}"),
        ("ls \u061cx", f"U+061C (ARABIC LETTER MARK) at position 3: {UNSEEN}"),
        # line and paragraph separators
        ("echo ok\u2028rm -rf ~", f"U+2028 (LINE SEPARATOR) at position 7: {UNSEEN}"),
        ("echo ok\u2029rm -rf ~", f"U+2029 (PARAGRAPH SEPARATOR) at position 7: {UNSEEN}"),
    ],
)
def test_a_command_with_a_control_character_is_refused_naming_it(command: str, said: str) -> None:
    assert unusable({"command": command}) == f"the command contains the control character {said}"


@pytest.mark.parametrize(
    "command",
    [
        "ls -la",
        "printf 'a\\nb'",
        "for x in 1 2\ndo echo $x\ndone",
        "echo 中文 «ok» a\u00a0b",
        "echo a\u200bb",
    ],
)
def test_a_command_people_can_read_as_it_runs_is_usable(command: str) -> None:
    """Newlines are lines to the shell too; letters of any script and spaces of any width are seen.
    A zero-width space is not refused: the card shows it escaped (`core.visible`)."""
    assert unusable({"command": command}) is None
