"""Terminal output as text people and agents read: ANSI/OSC sequences and carriage-return
overwrites removed (or, for a screen that shows colours, every sequence but the colours).
Pure functions, no I/O."""

from __future__ import annotations

import re

_OSC = re.compile(r"\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)")
"""Operating system commands (window titles, hyperlinks, OSC 697 markers): ESC ] ... BEL or ST."""
_CSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]")
"""Control sequences: colours, cursor movement, erasing (ESC [ params final)."""
_OTHER = re.compile(r"\x1b[@-Z\\-_]|\x1b[()][0-9A-Za-z]")
"""Two-byte escapes and character-set selections."""
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1a\x1c-\x1f\x7f]")
_SGR = re.compile(r"\x1b\[[0-9;]*m")
"""Select graphic rendition: colours and bold, the one control sequence a web page can show."""
_CRLF = re.compile(r"\r((?:\x1b\[[0-9;]*m)*)\n")
"""A line end `\\r\\n`, colours between its two characters included."""


def strip_ansi(text: str) -> str:
    """`text` without escape sequences and control characters; `\\r\\n` as `\\n`; a line
    overwritten with `\\r` (progress bars) keeps what was written last."""
    return _lines(_CSI.sub("", _OSC.sub("", text)))


def keep_colours(text: str) -> str:
    """`strip_ansi(text)` with its colour and bold sequences (SGR) kept, for a screen that shows them."""
    return _lines(_CSI.sub(_colour_only, _OSC.sub("", text)))


def _colour_only(found: re.Match[str]) -> str:
    return found.group(0) if _SGR.fullmatch(found.group(0)) else ""


def _lines(text: str) -> str:
    """The rest of the cleaning: two-byte escapes and control characters out, `\\r` overwrites done
    (colours count as no text: a line keeps the colours set before it was overwritten)."""
    text = _OTHER.sub("", text)
    text = _CRLF.sub(r"\1\n", text)
    if "\r" in text:
        text = "\n".join(_overwritten(line) for line in text.split("\n"))
    return _CONTROL.sub("", text)


def _overwritten(line: str) -> str:
    *before, last = line.split("\r")
    return "".join(_SGR.findall("".join(before))) + last
