"""The experience index: finished turns and task results, searchable by what was asked and answered.

One SQLite file (`<data_dir>/experience.db`, a `core.sqlite.SqliteFile`) shared by the workers
(which record) and the API (which searches); callers in async code use `asyncio.to_thread`.

- `turns` holds each record once, keyed by (owner_id, turn): recording again (a retried
  activity) changes nothing.
- `turns_fts` is an FTS5 index over question and answer with the `trigram` tokenizer, so words
  inside Chinese text (no spaces) match as well as English ones.
- A query is free text, never FTS5 syntax: it is split into words, each quoted as a phrase,
  and the words are OR-ed (bm25 ranks records matching more of them first). Words shorter than
  three characters cannot match a trigram index: a query made only of such words (`订单`) is a
  substring search instead, newest first.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from contracts import ExperienceMatch, ExperienceRecord

from .sqlite import SqliteFile

FILE_NAME = "experience.db"
MIN_TERM_CHARS = 3
"""The trigram tokenizer matches substrings of at least three characters."""

_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS turns (
        id INTEGER PRIMARY KEY,
        owner_id TEXT NOT NULL,
        turn INTEGER NOT NULL,
        agent_id TEXT NOT NULL,
        asked_by TEXT NOT NULL,
        at TEXT NOT NULL,
        outcome TEXT NOT NULL,
        question TEXT NOT NULL,
        answer TEXT NOT NULL,
        UNIQUE (owner_id, turn)
    )""",
    """CREATE VIRTUAL TABLE IF NOT EXISTS turns_fts USING fts5(
        question, answer, content='turns', content_rowid='id', tokenize='trigram'
    )""",
)
_COLUMNS = "owner_id, turn, agent_id, asked_by, at, outcome, question, answer"


_SEPARATORS = re.compile(r"[\s\x00-\x1f\x7f\"'`()*:^+\-.,;?!，。？！、]+")
"""Between words: spaces, control characters (a NUL would end an FTS5 string early), punctuation
and FTS5 operators."""


def words_of(query: str) -> list[str]:
    """The words of free text (see `_SEPARATORS`), each once."""
    return list(dict.fromkeys(word for word in _SEPARATORS.split(query) if word))


def match_expression(query: str) -> str | None:
    """The FTS5 expression for free text: its words as quoted phrases, OR-ed (None: no usable word)."""
    words = [word for word in words_of(query) if len(word) >= MIN_TERM_CHARS]
    if not words:
        return None
    return " OR ".join('"' + word.replace('"', '""') + '"' for word in words)


class ExperienceIndex:
    """Finished turns, recorded once and searched by relevance."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._file = SqliteFile(path, _SCHEMA)

    @classmethod
    def for_data_dir(cls, data_dir: Path) -> ExperienceIndex:
        """The index of a data dir (`<data_dir>/experience.db`)."""
        return cls(Path(data_dir) / FILE_NAME)

    def record(self, entry: ExperienceRecord) -> None:
        """Index one finished turn; a record already there (same owner and turn) is left as it is."""
        values = (
            entry.owner_id,
            entry.turn,
            entry.agent_id,
            entry.asked_by,
            entry.at.isoformat(),
            entry.outcome,
            entry.question,
            entry.answer,
        )
        with self._file.connect() as db:
            cursor = db.execute(
                f"INSERT OR IGNORE INTO turns ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)", values
            )
            if cursor.rowcount:
                db.execute(
                    "INSERT INTO turns_fts (rowid, question, answer) VALUES (?, ?, ?)",
                    (cursor.lastrowid, entry.question, entry.answer),
                )

    def search(self, query: str, top_k: int = 3, *, agent_id: str | None = None) -> list[ExperienceMatch]:
        """The `top_k` records best matching `query` (optionally one agent's), best first."""
        expression = match_expression(query)
        if top_k <= 0:
            return []
        if expression is None:
            return self._substring_search(words_of(query), top_k, agent_id)
        sql = (
            f"SELECT {', '.join('t.' + c.strip() for c in _COLUMNS.split(','))}, bm25(turns_fts) AS rank "
            "FROM turns_fts JOIN turns t ON t.id = turns_fts.rowid WHERE turns_fts MATCH ?"
        )
        rows = self._rows(sql, [expression], agent_id, "t.agent_id", "rank", top_k)
        return [ExperienceMatch(**_record(row[:8]), score=-float(row[8])) for row in rows]

    def _substring_search(self, words: list[str], top_k: int, agent_id: str | None) -> list[ExperienceMatch]:
        if not words:
            return []
        found = " OR ".join("(question LIKE ? OR answer LIKE ?)" for _ in words)
        params: list[Any] = [pattern for word in words for pattern in (f"%{word}%",) * 2]
        rows = self._rows(
            f"SELECT {_COLUMNS} FROM turns WHERE ({found})", params, agent_id, "agent_id", "at DESC", top_k
        )
        return [ExperienceMatch(**_record(row), score=0.0) for row in rows]

    def _rows(
        self, sql: str, params: list[Any], agent_id: str | None, agent_column: str, order: str, top_k: int
    ) -> list[Any]:
        """Run `sql` (a SELECT ending in its WHERE clause), narrowed to one agent when given, in
        `order`, at most `top_k` rows."""
        if agent_id is not None:
            sql += f" AND {agent_column} = ?"
            params = [*params, agent_id]
        with self._file.connect() as db:
            return db.execute(f"{sql} ORDER BY {order} LIMIT ?", [*params, top_k]).fetchall()

    def count(self) -> int:
        """Records indexed."""
        with self._file.connect() as db:
            total: int = db.execute("SELECT COUNT(*) FROM turns").fetchone()[0]
            return total


def _record(row: tuple[Any, ...]) -> dict[str, Any]:
    return dict(zip([c.strip() for c in _COLUMNS.split(",")], row, strict=True))
