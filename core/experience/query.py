"""What an experience search looks for, and what it gives back, whichever database holds the index.

A query is free text, never a database's search syntax: it is split into words (`words_of`) at
spaces, control characters and punctuation. Words of at least `MIN_TERM_CHARS` characters are
searched by relevance; a query made only of shorter words (`订单`) is a substring search, newest
first. Each backend (`sqlite.py`, `postgres.py`) turns the words into its own statement.
"""

from __future__ import annotations

import re
from typing import Any

from contracts import ExperienceMatch

MIN_TERM_CHARS = 3
"""The shortest word searched by relevance (SQLite's trigram tokenizer matches no shorter one)."""
COLUMNS = ("owner_id", "turn", "agent_id", "asked_by", "at", "outcome", "question", "answer", "project")
"""An indexed turn's fields, in the order every backend selects them."""

_SEPARATORS = re.compile(r"[\s\x00-\x1f\x7f\"'`()*:^+\-.,;?!，。？！、]+")
"""Between words: spaces, control characters (a NUL would end an FTS5 string early), punctuation
and FTS5 operators."""


def words_of(query: str) -> list[str]:
    """The words of free text (see `_SEPARATORS`), each once."""
    return list(dict.fromkeys(word for word in _SEPARATORS.split(query) if word))


def search_words(query: str) -> list[str]:
    """The words searched by relevance (empty: use `words_of` for a substring search)."""
    return [word for word in words_of(query) if len(word) >= MIN_TERM_CHARS]


def like_pattern(word: str) -> str:
    """A LIKE pattern finding `word` anywhere, its `%`, `_` and `\\` taken literally (ESCAPE '\\')."""
    escaped = word.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def match_of(row: tuple[Any, ...] | Any, score: float) -> ExperienceMatch:
    """A search result from a row whose first fields are `COLUMNS`."""
    return ExperienceMatch(**dict(zip(COLUMNS, tuple(row)[: len(COLUMNS)], strict=True)), score=score)
