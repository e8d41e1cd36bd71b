"""The experience index in PostgreSQL, shared by the workers and API processes of every machine.

Selected by `SYNAPSE_EXPERIENCE_URL=postgresql://...`; the table `experience_turns` is created on
first use (several processes may start at once: `core.database.schema_lock`).

- Each record is kept once, keyed by (owner_id, turn): recording again (a retried activity)
  changes nothing.
- A search counts, for each record, how many of the query's words (`query.search_words`) its
  question or answer contains, case-insensitively and anywhere (so words inside Chinese text
  match too), and ranks records matching more of them first, newer first among equals.
- `pg_trgm`'s GIN index serves those `ILIKE` scans when the extension can be installed (it is a
  trusted extension: a database owner may); without it the scans read the table.
- PostgreSQL text holds no NUL character: one in a recorded question or answer is kept as U+FFFD.
"""

from __future__ import annotations

import logging
import operator
import threading
from functools import reduce
from typing import Any

from sqlalchemy import (
    BigInteger,
    Column,
    ColumnElement,
    DateTime,
    Identity,
    Integer,
    MetaData,
    Select,
    Table,
    Text,
    UniqueConstraint,
    case,
    func,
    or_,
    select,
    text,
)
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.engine import URL, Connection, Engine
from sqlalchemy.exc import DBAPIError

from contracts import ExperienceMatch, ExperienceRecord

from ..database import create_schema, engine_for
from .query import COLUMNS, like_pattern, match_of, search_words, words_of

logger = logging.getLogger(__name__)

METADATA = MetaData()
TURNS = Table(
    "experience_turns",
    METADATA,
    Column("id", BigInteger, Identity(), primary_key=True),
    Column("owner_id", Text, nullable=False),
    Column("turn", Integer, nullable=False),
    Column("agent_id", Text, nullable=False),
    Column("asked_by", Text, nullable=False),
    Column("at", DateTime(timezone=True), nullable=False),
    Column("outcome", Text, nullable=False),
    Column("question", Text, nullable=False),
    Column("answer", Text, nullable=False),
    UniqueConstraint("owner_id", "turn"),
)
TRIGRAM_INDEX = "experience_turns_text_trgm"
_SELECTED = [TURNS.c[name] for name in COLUMNS]


def _storable(value: str) -> str:
    return value.replace("\x00", "\ufffd")


def _create(conn: Connection) -> None:
    """The table, and its trigram index when `pg_trgm` can be had (see the module docstring)."""
    METADATA.create_all(conn)
    try:
        with conn.begin_nested():
            conn.execute(text("CREATE EXTENSION IF NOT EXISTS pg_trgm"))
            conn.execute(
                text(
                    f"CREATE INDEX IF NOT EXISTS {TRIGRAM_INDEX} ON {TURNS.name} "
                    "USING gin (question gin_trgm_ops, answer gin_trgm_ops)"
                )
            )
    except DBAPIError as err:
        logger.info("experience search runs without a trigram index: %s", err.orig)


def _contains(word: str) -> ColumnElement[bool]:
    pattern = like_pattern(word)
    return or_(TURNS.c.question.ilike(pattern, escape="\\"), TURNS.c.answer.ilike(pattern, escape="\\"))


class PostgresExperience:
    """Finished turns in PostgreSQL, recorded once and searched by relevance."""

    def __init__(self, url: str | URL) -> None:
        self._engine: Engine = engine_for(url)
        self._ready = False
        self._lock = threading.Lock()

    def _db(self) -> Engine:
        with self._lock:
            if not self._ready:
                create_schema(self._engine, _create)
                self._ready = True
        return self._engine

    def record(self, entry: ExperienceRecord) -> None:
        """Index one finished turn; a record already there (same owner and turn) is left as it is."""
        values = entry.model_dump(include=set(COLUMNS))
        values["question"], values["answer"] = _storable(entry.question), _storable(entry.answer)
        statement = insert(TURNS).values(**values).on_conflict_do_nothing(index_elements=["owner_id", "turn"])
        with self._db().begin() as conn:
            conn.execute(statement)

    def search(self, query: str, top_k: int = 3, *, agent_id: str | None = None) -> list[ExperienceMatch]:
        """The `top_k` records best matching `query` (optionally one agent's), best first."""
        if top_k <= 0:
            return []
        words = search_words(query)
        if not words:
            return self._substring_search(words_of(query), top_k, agent_id)
        score = reduce(operator.add, [case((_contains(word), 1), else_=0) for word in words])
        statement = (
            select(*_SELECTED, score.label("score"))
            .where(score > 0)
            .order_by(score.desc(), TURNS.c.at.desc(), TURNS.c.id.desc())
        )
        rows = self._rows(statement, agent_id, top_k)
        return [match_of(row, float(row.score)) for row in rows]

    def _substring_search(self, words: list[str], top_k: int, agent_id: str | None) -> list[ExperienceMatch]:
        if not words:
            return []
        statement = (
            select(*_SELECTED)
            .where(or_(*(_contains(word) for word in words)))
            .order_by(TURNS.c.at.desc(), TURNS.c.id.desc())
        )
        return [match_of(row, 0.0) for row in self._rows(statement, agent_id, top_k)]

    def _rows(self, statement: Select[Any], agent_id: str | None, top_k: int) -> list[Any]:
        if agent_id is not None:
            statement = statement.where(TURNS.c.agent_id == agent_id)
        with self._db().connect() as conn:
            return list(conn.execute(statement.limit(top_k)))

    def count(self) -> int:
        """Records indexed."""
        with self._db().connect() as conn:
            return int(conn.execute(select(func.count()).select_from(TURNS)).scalar_one())

    def close(self) -> None:
        """Release the engine's connections."""
        self._engine.dispose()
