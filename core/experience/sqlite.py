"""The experience index in one SQLite file on this machine (the default: `<data_dir>/experience.db`).

A `core.sqlite.SqliteFile` that the workers (which record) and the API (which searches) on one
machine share.

- `turns` holds each record once, keyed by (owner_id, turn): recording again (a retried
  activity) changes nothing.
- `turns_fts` is an FTS5 index over question and answer with the `trigram` tokenizer, so words
  inside Chinese text (no spaces) match as well as English ones.
- The query's words (`query.search_words`) are each quoted as a phrase and OR-ed; bm25 ranks
  records matching more of them first.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from contracts import ExperienceMatch, ExperienceRecord

from ..sqlite import SqliteFile
from .query import COLUMNS, like_pattern, match_of, search_words, words_of

FILE_NAME = "experience.db"

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
_SELECTED = ", ".join(COLUMNS)


def match_expression(query: str) -> str | None:
    """The FTS5 expression for free text: its words as quoted phrases, OR-ed (None: no usable word)."""
    words = search_words(query)
    if not words:
        return None
    return " OR ".join('"' + word.replace('"', '""') + '"' for word in words)


class SqliteExperience:
    """Finished turns in a SQLite file, recorded once and searched by relevance."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._file = SqliteFile(path, _SCHEMA)

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
                f"INSERT OR IGNORE INTO turns ({_SELECTED}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)", values
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
            f"SELECT {', '.join('t.' + c for c in COLUMNS)}, bm25(turns_fts) AS rank "
            "FROM turns_fts JOIN turns t ON t.id = turns_fts.rowid WHERE turns_fts MATCH ?"
        )
        rows = self._rows(sql, [expression], agent_id, "t.agent_id", "rank", top_k)
        return [match_of(row, -float(row[len(COLUMNS)])) for row in rows]

    def _substring_search(self, words: list[str], top_k: int, agent_id: str | None) -> list[ExperienceMatch]:
        if not words:
            return []
        found = " OR ".join("(question LIKE ? ESCAPE '\\' OR answer LIKE ? ESCAPE '\\')" for _ in words)
        params: list[Any] = [pattern for word in words for pattern in (like_pattern(word),) * 2]
        rows = self._rows(
            f"SELECT {_SELECTED} FROM turns WHERE ({found})", params, agent_id, "agent_id", "at DESC", top_k
        )
        return [match_of(row, 0.0) for row in rows]

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
