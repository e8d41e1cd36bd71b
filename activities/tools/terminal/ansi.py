"""Terminal output as text people and agents read: escape sequences, control characters and
carriage-return overwrites removed (or, for a screen that shows colours, all of it but the colours).
Pure functions, no I/O.

Sequences come 7-bit (`ESC [`, `ESC ]`) or 8-bit (C1 controls: CSI `U+009B`, OSC `U+009D`, ST
`U+009C`); a terminal acts on both, so both go whole, parameters and final byte included. A lone
C1 character goes like a lone C0 one. Only 7-bit colours (SGR) are kept by `keep_colours`.
"""

from __future__ import annotations

import re

_OSC = r"(?:\x1b\]|\x9d)[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)"
"""Operating system commands (window titles, hyperlinks, OSC 697 markers): OSC ... BEL or ST."""
_CSI = r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]"
"""Control sequences: colours, cursor movement, erasing (CSI params final)."""
_OTHER = r"\x1b[@-Z\\-_]|\x1b[()][0-9A-Za-z]"
"""Two-byte escapes and character-set selections."""
_CONTROL = r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]"
"""Control characters but a tab, a newline and a carriage return: C0 (ESC included), DEL, C1."""
_SEQUENCE = re.compile(f"{_OSC}|{_CSI}|{_OTHER}|{_CONTROL}")
"""What goes, in one pass from left to right: a removal never joins what is left into a new sequence."""
_SGR = re.compile(r"\x1b\[[0-9;]*m")
"""Select graphic rendition: colours and bold, the one control sequence a web page can show."""
_CRLF = re.compile(r"\r((?:\x1b\[[0-9;]*m)*)\n")
"""A line end `\\r\\n`, colours between its two characters included."""


def strip_ansi(text: str) -> str:
    """`text` without escape sequences and control characters; `\\r\\n` as `\\n`; a line
    overwritten with `\\r` (progress bars) keeps what was written last."""
    return _lines(_SEQUENCE.sub("", text))


def keep_colours(text: str) -> str:
    """`strip_ansi(text)` with its colour and bold sequences (SGR) kept, for a screen that shows them."""
    return _lines(_SEQUENCE.sub(_colour_only, text))


def _colour_only(found: re.Match[str]) -> str:
    return found.group(0) if _SGR.fullmatch(found.group(0)) else ""


def _lines(text: str) -> str:
    """`\\r` overwrites done (colours count as no text: a line keeps the colours set before it was
    overwritten)."""
    text = _CRLF.sub(r"\1\n", text)
    if "\r" in text:
        text = "\n".join(_overwritten(line) for line in text.split("\n"))
    return text


def _overwritten(line: str) -> str:
    *before, last = line.split("\r")
    return "".join(_SGR.findall("".join(before))) + last
