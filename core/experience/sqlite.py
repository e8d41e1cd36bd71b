"""The experience index in one SQLite file on this machine (the default: `<data_dir>/experience.db`).

A `core.sqlite.SqliteFile` that the workers (which record) and the API (which searches) on one
machine share.

- `turns` holds each record once, keyed by (owner_id, turn): recording again (a retried
  activity) changes nothing. Its `project` is the session's; `key_id` names the codec key that
  sealed it (NULL: kept in clear).
- In clear (no `SYNAPSE_CODEC_KEYS`): `turns_fts` is an FTS5 index over question and answer with
  the `trigram` tokenizer, so words inside Chinese text (no spaces) match as well as English
  ones. The query's words (`query.search_words`) are each quoted as a phrase and OR-ed; bm25
  ranks records matching more of them first.
- Sealed (`sealed.py`): question and answer are ciphertext, `turn_words` the blind index (a
  keyed hash of each word → its record); records holding more of the query's words come first.
  Records written in clear before keys were set are sealed when the file is opened with keys
  (`_seal_clear_records`), their FTS index emptied and its freed pages zeroed.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Collection
from pathlib import Path
from typing import Any

from contracts import ExperienceMatch, ExperienceRecord

from ..sqlite import SqliteFile
from .query import COLUMNS, like_pattern, match_of, search_words, words_of
from .sealed import ExperienceSealer

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
        project TEXT,
        key_id TEXT,
        UNIQUE (owner_id, turn)
    )""",
    """CREATE VIRTUAL TABLE IF NOT EXISTS turns_fts USING fts5(
        question, answer, content='turns', content_rowid='id', tokenize='trigram'
    )""",
    """CREATE TABLE IF NOT EXISTS turn_words (
        word BLOB NOT NULL,
        turn_id INTEGER NOT NULL,
        PRIMARY KEY (word, turn_id)
    ) WITHOUT ROWID""",
)
_ADDED_COLUMNS = ("project", "key_id")
"""Columns files written before them lack (added on first use)."""
_SELECTED = ", ".join(COLUMNS)
_PLACEHOLDERS = ", ".join("?" for _ in COLUMNS)


def match_expression(query: str) -> str | None:
    """The FTS5 expression for free text: its words as quoted phrases, OR-ed (None: no usable word)."""
    words = search_words(query)
    if not words:
        return None
    return " OR ".join('"' + word.replace('"', '""') + '"' for word in words)


def _narrowed(
    prefix: str, agent_id: str | None, projects: Collection[str | None] | None
) -> tuple[str, list[Any]]:
    """` AND ...` conditions keeping one agent's records and those of `projects` (None: any; a
    None among them: the records of no project)."""
    sql, params = "", []
    if agent_id is not None:
        sql += f" AND {prefix}agent_id = ?"
        params.append(agent_id)
    if projects is not None:
        named = sorted(project for project in projects if project is not None)
        either = [f"{prefix}project IN ({', '.join('?' for _ in named)})"]
        either += [f"{prefix}project IS NULL"] if None in projects else []
        sql += f" AND ({' OR '.join(either)})"
        params.extend(named)
    return sql, params


class SqliteExperience:
    """Finished turns in a SQLite file, recorded once and searched by relevance; sealed with
    `sealer` (`sealed.py`) when given."""

    def __init__(self, path: Path, sealer: ExperienceSealer | None = None) -> None:
        self.path = path
        self._file = SqliteFile(path, _SCHEMA)
        self._sealer = sealer
        self._upgraded = False

    def _db(self) -> Any:
        """A connection in a transaction, the file brought up to date on first use."""
        if not self._upgraded:
            with self._file.connect() as db:
                _add_columns(db)
                sealed = self._sealer is not None and self._seal_clear_records(db, self._sealer)
            if sealed:  # the log's old frames held them in clear: empty it
                with self._file.connect() as db:
                    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            self._upgraded = True
        return self._file.connect()

    def record(self, entry: ExperienceRecord) -> None:
        """Index one finished turn; a record already there (same owner and turn) is left as it is."""
        values = entry.model_dump(include=set(COLUMNS))
        values["at"] = entry.at.isoformat()
        if self._sealer is not None:
            for field in ("question", "answer"):
                values[field] = self._sealer.seal(values[field], entry.owner_id, entry.turn, field)
        key_id = self._sealer.key_id if self._sealer is not None else None
        with self._db() as db:
            cursor = db.execute(
                f"INSERT OR IGNORE INTO turns ({_SELECTED}, key_id) VALUES ({_PLACEHOLDERS}, ?)",
                [*(values[column] for column in COLUMNS), key_id],
            )
            if not cursor.rowcount:
                return
            if self._sealer is None:
                db.execute(
                    "INSERT INTO turns_fts (rowid, question, answer) VALUES (?, ?, ?)",
                    (cursor.lastrowid, entry.question, entry.answer),
                )
            else:
                tokens = self._sealer.tokens(entry.question, entry.answer)
                db.executemany(
                    "INSERT OR IGNORE INTO turn_words (word, turn_id) VALUES (?, ?)",
                    [(token, cursor.lastrowid) for token in tokens],
                )

    def search(
        self,
        query: str,
        top_k: int = 3,
        *,
        agent_id: str | None = None,
        projects: Collection[str | None] | None = None,
    ) -> list[ExperienceMatch]:
        """The `top_k` records best matching `query` (optionally one agent's, or of `projects`
        only), best first."""
        if top_k <= 0:
            return []
        if self._sealer is not None:
            return self._blind_search(self._sealer, query, top_k, agent_id, projects)
        expression = match_expression(query)
        if expression is None:
            return self._substring_search(words_of(query), top_k, agent_id, projects)
        narrowed, params = _narrowed("t.", agent_id, projects)
        sql = (
            f"SELECT {', '.join('t.' + c for c in COLUMNS)}, bm25(turns_fts) AS rank "
            f"FROM turns_fts JOIN turns t ON t.id = turns_fts.rowid WHERE turns_fts MATCH ?{narrowed} "
            "ORDER BY rank LIMIT ?"
        )
        rows = self._fetch(sql, [expression, *params, top_k])
        return [match_of(row, -float(row[len(COLUMNS)])) for row in rows]

    def _substring_search(
        self, words: list[str], top_k: int, agent_id: str | None, projects: Collection[str | None] | None
    ) -> list[ExperienceMatch]:
        if not words:
            return []
        found = " OR ".join("(question LIKE ? ESCAPE '\\' OR answer LIKE ? ESCAPE '\\')" for _ in words)
        narrowed, params = _narrowed("", agent_id, projects)
        rows = self._fetch(
            f"SELECT {_SELECTED} FROM turns WHERE key_id IS NULL AND ({found}){narrowed} "
            "ORDER BY at DESC LIMIT ?",
            [*(pattern for word in words for pattern in (like_pattern(word),) * 2), *params, top_k],
        )
        return [match_of(row, 0.0) for row in rows]

    def _blind_search(
        self,
        sealer: ExperienceSealer,
        query: str,
        top_k: int,
        agent_id: str | None,
        projects: Collection[str | None] | None,
    ) -> list[ExperienceMatch]:
        tokens = sealer.query_tokens(query)
        if not tokens:
            return []
        narrowed, params = _narrowed("t.", agent_id, projects)
        sql = (
            f"SELECT {', '.join('t.' + c for c in COLUMNS)}, t.key_id, COUNT(*) AS score "
            "FROM turn_words w JOIN turns t ON t.id = w.turn_id "
            f"WHERE w.word IN ({', '.join('?' for _ in tokens)}){narrowed} "
            "GROUP BY t.id ORDER BY score DESC, t.at DESC, t.id DESC LIMIT ?"
        )
        rows = self._fetch(sql, [*tokens, *params, top_k])
        return [sealer.match(row, float(row[len(COLUMNS) + 1])) for row in rows]

    def _fetch(self, sql: str, params: list[Any]) -> list[Any]:
        with self._db() as db:
            return list(db.execute(sql, params).fetchall())

    def count(self) -> int:
        """Records indexed."""
        with self._db() as db:
            total: int = db.execute("SELECT COUNT(*) FROM turns").fetchone()[0]
            return total

    @staticmethod
    def _seal_clear_records(db: sqlite3.Connection, sealer: ExperienceSealer) -> bool:
        """Seal the records kept in clear (written before codec keys were set), and empty the FTS
        index that held their words, zeroing what is freed (`secure_delete`); whether there were any."""
        clear = db.execute(
            "SELECT id, owner_id, turn, question, answer FROM turns WHERE key_id IS NULL"
        ).fetchall()
        if not clear:
            return False
        db.execute("PRAGMA secure_delete = ON")
        for row_id, owner_id, turn, question, answer in clear:
            sealed = db.execute(
                "UPDATE turns SET question = ?, answer = ?, key_id = ? WHERE id = ? AND key_id IS NULL",
                (
                    sealer.seal(question, owner_id, turn, "question"),
                    sealer.seal(answer, owner_id, turn, "answer"),
                    sealer.key_id,
                    row_id,
                ),
            )
            if not sealed.rowcount:  # another process sealed it meanwhile
                continue
            db.executemany(
                "INSERT OR IGNORE INTO turn_words (word, turn_id) VALUES (?, ?)",
                [(token, row_id) for token in sealer.tokens(question, answer)],
            )
        db.execute("INSERT INTO turns_fts (turns_fts) VALUES ('delete-all')")
        return True


def _add_columns(db: sqlite3.Connection) -> None:
    """Add the columns a file written before them lacks (another process may be adding them too)."""
    present = {row[1] for row in db.execute("PRAGMA table_info(turns)")}
    for column in _ADDED_COLUMNS:
        if column in present:
            continue
        try:
            db.execute(f"ALTER TABLE turns ADD COLUMN {column} TEXT")
        except sqlite3.OperationalError as err:
            if "duplicate column" not in str(err):
                raise
