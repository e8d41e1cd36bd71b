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
- Each record keeps its session's `project`; a search may be narrowed to some projects.
- Sealed (with `SYNAPSE_CODEC_KEYS`, `sealed.py`): question and answer are ciphertext (`key_id`
  names the key), `experience_words` the blind index (a keyed hash of each word → its record);
  records holding more of the query's words come first. Records written in clear before keys
  were set are sealed when the index is opened with keys; PostgreSQL keeps their old row versions
  (and the trigram index their words) until a `VACUUM FULL experience_turns` (docs/production.md).
"""

from __future__ import annotations

import logging
import operator
import threading
from collections.abc import Collection
from functools import reduce
from typing import Any

from sqlalchemy import (
    BigInteger,
    Column,
    ColumnElement,
    DateTime,
    ForeignKey,
    Identity,
    Integer,
    LargeBinary,
    MetaData,
    Select,
    Table,
    Text,
    UniqueConstraint,
    case,
    func,
    inspect,
    or_,
    select,
    text,
    update,
)
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.engine import URL, Connection, Engine
from sqlalchemy.exc import DBAPIError

from contracts import ExperienceMatch, ExperienceRecord

from ..database import create_schema, engine_for
from .query import COLUMNS, like_pattern, match_of, search_words, words_of
from .sealed import ExperienceSealer

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
    Column("project", Text),
    Column("key_id", Text),
    UniqueConstraint("owner_id", "turn"),
)
WORDS = Table(
    "experience_words",
    METADATA,
    Column("word", LargeBinary, primary_key=True),
    Column("turn_id", BigInteger, ForeignKey(TURNS.c.id, ondelete="CASCADE"), primary_key=True),
)
TRIGRAM_INDEX = "experience_turns_text_trgm"
_SELECTED = [TURNS.c[name] for name in COLUMNS]
_ADDED_COLUMNS = ("project", "key_id")
"""Columns a table made before them lacks (added when the index is opened)."""


def _storable(value: str) -> str:
    return value.replace("\x00", "\ufffd")


def _create(conn: Connection) -> None:
    """The table, and its trigram index when `pg_trgm` can be had (see the module docstring)."""
    METADATA.create_all(conn)
    present = {column["name"] for column in inspect(conn).get_columns(TURNS.name)}
    for column in _ADDED_COLUMNS:
        if column not in present:
            conn.execute(text(f"ALTER TABLE {TURNS.name} ADD COLUMN {column} text"))
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


def _seal_clear_records(conn: Connection, sealer: ExperienceSealer) -> None:
    """Seal the records kept in clear (written before codec keys were set) and index their words."""
    clear = conn.execute(
        select(TURNS.c.id, TURNS.c.owner_id, TURNS.c.turn, TURNS.c.question, TURNS.c.answer)
        .where(TURNS.c.key_id.is_(None))
        .with_for_update(skip_locked=True)
    ).all()
    for row_id, owner_id, turn, question, answer in clear:
        conn.execute(
            update(TURNS)
            .where(TURNS.c.id == row_id)
            .values(
                question=sealer.seal(question, owner_id, turn, "question"),
                answer=sealer.seal(answer, owner_id, turn, "answer"),
                key_id=sealer.key_id,
            )
        )
        words = [{"word": token, "turn_id": row_id} for token in sealer.tokens(question, answer)]
        if words:
            conn.execute(insert(WORDS).on_conflict_do_nothing(), words)


class PostgresExperience:
    """Finished turns in PostgreSQL, recorded once and searched by relevance; sealed with
    `sealer` (`sealed.py`) when given."""

    def __init__(self, url: str | URL, sealer: ExperienceSealer | None = None) -> None:
        self._engine: Engine = engine_for(url)
        self._sealer = sealer
        self._ready = False
        self._lock = threading.Lock()

    def _db(self) -> Engine:
        with self._lock:
            if not self._ready:
                create_schema(self._engine, _create)
                if self._sealer is not None:
                    with self._engine.begin() as conn:
                        _seal_clear_records(conn, self._sealer)
                self._ready = True
        return self._engine

    def record(self, entry: ExperienceRecord) -> None:
        """Index one finished turn; a record already there (same owner and turn) is left as it is."""
        values = entry.model_dump(include=set(COLUMNS))
        for field in ("question", "answer"):
            values[field] = _storable(values[field])
            if self._sealer is not None:
                values[field] = self._sealer.seal(values[field], entry.owner_id, entry.turn, field)
        values["key_id"] = self._sealer.key_id if self._sealer is not None else None
        statement = (
            insert(TURNS)
            .values(**values)
            .on_conflict_do_nothing(index_elements=["owner_id", "turn"])
            .returning(TURNS.c.id)
        )
        with self._db().begin() as conn:
            row_id = conn.execute(statement).scalar_one_or_none()
            if row_id is None or self._sealer is None:
                return
            words = self._sealer.tokens(entry.question, entry.answer)
            if words:
                conn.execute(
                    insert(WORDS).on_conflict_do_nothing(), [{"word": w, "turn_id": row_id} for w in words]
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
        words = search_words(query)
        if not words:
            return self._substring_search(words_of(query), top_k, agent_id, projects)
        score = reduce(operator.add, [case((_contains(word), 1), else_=0) for word in words])
        statement = (
            select(*_SELECTED, score.label("score"))
            .where(score > 0, TURNS.c.key_id.is_(None))
            .order_by(score.desc(), TURNS.c.at.desc(), TURNS.c.id.desc())
        )
        rows = self._rows(statement, agent_id, projects, top_k)
        return [match_of(row, float(row.score)) for row in rows]

    def _substring_search(
        self, words: list[str], top_k: int, agent_id: str | None, projects: Collection[str | None] | None
    ) -> list[ExperienceMatch]:
        if not words:
            return []
        statement = (
            select(*_SELECTED)
            .where(or_(*(_contains(word) for word in words)), TURNS.c.key_id.is_(None))
            .order_by(TURNS.c.at.desc(), TURNS.c.id.desc())
        )
        return [match_of(row, 0.0) for row in self._rows(statement, agent_id, projects, top_k)]

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
        score = func.count().label("score")
        statement = (
            select(*_SELECTED, TURNS.c.key_id, score)
            .select_from(WORDS.join(TURNS, WORDS.c.turn_id == TURNS.c.id))
            .where(WORDS.c.word.in_(tokens))
            .group_by(TURNS.c.id)
            .order_by(score.desc(), TURNS.c.at.desc(), TURNS.c.id.desc())
        )
        rows = self._rows(statement, agent_id, projects, top_k)
        return [sealer.match(row, float(row.score)) for row in rows]

    def _rows(
        self,
        statement: Select[Any],
        agent_id: str | None,
        projects: Collection[str | None] | None,
        top_k: int,
    ) -> list[Any]:
        if agent_id is not None:
            statement = statement.where(TURNS.c.agent_id == agent_id)
        if projects is not None:
            named = sorted(project for project in projects if project is not None)
            either = [TURNS.c.project.in_(named), *([TURNS.c.project.is_(None)] if None in projects else [])]
            statement = statement.where(or_(*either))
        with self._db().connect() as conn:
            return list(conn.execute(statement.limit(top_k)))

    def count(self) -> int:
        """Records indexed."""
        with self._db().connect() as conn:
            return int(conn.execute(select(func.count()).select_from(TURNS)).scalar_one())

    def close(self) -> None:
        """Release the engine's connections."""
        self._engine.dispose()
