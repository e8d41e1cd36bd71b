"""Sizes at the door: each field a command carries is held to its own limit (`TooLarge`).

`api/errors.py` answers `TooLarge` with 413 naming the limit, the size and the variable that
sets it; `api/limits.py` applies the same error to whole request bodies.
"""

from __future__ import annotations


class TooLarge(Exception):
    """Something is over its configured size; `str(err)` says what, how big, and the limit."""

    def __init__(self, what: str, size: int, limit: int, variable: str, hint: str = "") -> None:
        self.what, self.size, self.limit, self.variable = what, size, limit, variable
        message = f"{what} is {size:,} bytes; the limit is {limit:,} bytes ({variable})"
        super().__init__(message + (f". {hint}" if hint else ""))


def utf8_size(text: str | None) -> int:
    """Bytes of `text` in UTF-8 (0 for None)."""
    return len(text.encode("utf-8")) if text else 0


def check_size(what: str, text: str | None, limit: int, variable: str, hint: str = "") -> None:
    """Raise `TooLarge` when `text` is over `limit` bytes in UTF-8."""
    size = utf8_size(text)
    if size > limit:
        raise TooLarge(what, size, limit, variable, hint)
