"""Text shown to a person as it is: every character that prints nothing written as an escape.

A command or a tool's arguments on an approval card must read as they will run. A direction
override (`U+202E`) shows the words after it in another order, a zero-width space or a C1 control
(`U+009B`, a terminal's CSI) is not seen at all; escaped (`\\u202e`, `\\x9b`) they are. Only what is
shown changes: what the workflow recorded (the request's summary and arguments) stays as it was.
The console does the same in JavaScript (`api/console/static/js/render.js`, `visible`).
"""

from __future__ import annotations

import unicodedata

_UNSEEN_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
"""Controls, format characters (direction marks and overrides, zero-width spaces and joiners, the
byte-order mark, tags), surrogates, private use, unassigned, line and paragraph separators."""
_UNSEEN_OTHERS = frozenset(
    {0x034F, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x3164, 0xFFA0}
    | set(range(0x180B, 0x1810))
    | set(range(0xFE00, 0xFE10))
    | set(range(0xE0100, 0xE01F0))
)
"""Default-ignorable code points of other categories: the combining grapheme joiner, Hangul
fillers, Khmer inherent vowels, Mongolian and other variation selectors."""
_KEPT = frozenset("\n\t")
"""Line breaks and tabs are seen (as such), and commands and SQL are written with them."""


def visible(text: str) -> str:
    """`text` with every character a person cannot see written as its escape, as Python writes
    it: `\\x9b`, `\\u202e`, `\\U000e0041` (newlines and tabs stay)."""
    return "".join(_escape(char) if _unseen(char) else char for char in text)


def _unseen(char: str) -> bool:
    return char not in _KEPT and (
        unicodedata.category(char) in _UNSEEN_CATEGORIES or ord(char) in _UNSEEN_OTHERS
    )


def _escape(char: str) -> str:
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"
