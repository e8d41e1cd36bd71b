"""Text on an approval card reads as it will run: every character that prints nothing is shown as
its escape, every other one as it is."""

from __future__ import annotations

import re
import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.visible import visible

UNSEEN = [
    ("\x9b", r"\x9b"),  # CSI, 8-bit
    ("\x85", r"\x85"),  # next line
    ("\x1b", r"\x1b"),
    ("\x00", r"\x00"),
    ("\r", r"\x0d"),
    ("\x7f", r"\x7f"),
    ("\u202e", r"\u202e"),  # right-to-left override
    ("\u2066", r"\u2066"),  # left-to-right isolate
    ("\u200e", r"\u200e"),  # left-to-right mark
    ("\u061c", r"\u061c"),  # Arabic letter mark
    ("\u200b", r"\u200b"),  # zero-width space
    ("\u200c", r"\u200c"),  # zero-width non-joiner
    ("\u200d", r"\u200d"),  # zero-width joiner
    ("\u2060", r"\u2060"),  # word joiner
    ("\ufeff", r"\ufeff"),  # byte-order mark
    ("\u00ad", r"\xad"),  # soft hyphen
    ("\u2028", r"\u2028"),  # line separator
    ("\u2029", r"\u2029"),  # paragraph separator
    ("\u3164", r"\u3164"),  # Hangul filler
    ("\ufe0f", r"\ufe0f"),  # variation selector
    ("\U000e0041", r"\U000e0041"),  # tag letter A
    ("\ue000", r"\ue000"),  # private use
]
SEEN = ["rm -rf build", "a\nb", "a\tb", "中文\u3000全角", "a\u00a0b", "naïve", "é", "👍", "\\u202e"]


@pytest.mark.parametrize(("char", "shown"), UNSEEN, ids=[shown for _, shown in UNSEEN])
def test_a_character_that_prints_nothing_is_shown_escaped(char: str, shown: str) -> None:
    assert visible(f"rm -rf /tmp/x{char} y") == f"rm -rf /tmp/x{shown} y"


@pytest.mark.parametrize("text", SEEN)
def test_text_a_person_can_see_stays_as_it_is(text: str) -> None:
    assert visible(text) == text


ESCAPE = re.compile(r"\\x[0-9a-f]{2}|\\u[0-9a-f]{4}|\\U[0-9a-f]{8}")


@given(st.text())
def test_what_is_shown_prints_every_character_and_loses_none(text: str) -> None:
    shown = visible(text)
    assert all(
        char in "\n\t" or unicodedata.category(char) not in {"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"}
        for char in shown
    )
    if "\\" not in text:
        assert ESCAPE.sub(lambda found: chr(int(found.group()[2:], 16)), shown) == text
