"""Where approval rules are kept: one table that every API process and worker shares.

SQLite under the data dir by default (`<data_dir>/rules.db`), any SQLAlchemy URL by
`SYNAPSE_RULES_URL` (PostgreSQL for several machines). Workers read it on every assessment, so a
rule saved now decides the next call of every session. Methods block: async callers use
`asyncio.to_thread`.

A rule's id is never reused, so `denied by rule:<id>` in an old audit always names the rule that
decided: a new rule's id is `rule_` and a ULID-like 26 characters (time, then randomness), and a
deleted rule stays as a tombstone (who deleted it, when) that decides nothing and is listed by
nothing. A table made before (ids `rule_<row number>`, rows deleted) is brought up to date when a
store first opens it: its rules keep their ids.

With `SYNAPSE_CODEC_KEYS` set, a rule's body (its reason, match and everything else it says) is
stored sealed (`core.at_rest`), bound to its rule id; the columns rules are looked up by (tool,
scope, project, user) stay in clear. Bodies written before the keys were set read as they are.
"""

from __future__ import annotations

import secrets
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import (
    Column,
    Connection,
    DateTime,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    bindparam,
    cast,
    inspect,
    literal,
    or_,
    select,
    text,
)
from sqlalchemy.engine import Engine
from sqlalchemy.exc import OperationalError

from contracts import ANY_TOOL_RULE, ApprovalRule, NewRule, RuleContext, RuleScope

from ..at_rest import Sealer
from ..database import create_schema, engine_for
from ..settings import Settings
from ..times import utc_text

METADATA = MetaData()
RULES = Table(
    "approval_rules",
    METADATA,
    Column("id", Integer, primary_key=True, autoincrement=True),  # the order rules were saved in
    Column("rule_id", String(40)),  # NULL only in a row of an old table before it is brought up to date
    Column("tool", String(200), nullable=False, index=True),
    Column("scope", String(20), nullable=False),
    Column("project", String(1000)),
    Column("user", String(200)),
    Column("body", Text, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("deleted_by", String(200)),
    Column("deleted_at", DateTime(timezone=True)),
)
RULE_IDS = Index("approval_rules_rule_id", RULES.c.rule_id, unique=True)
LATER_COLUMNS = ("rule_id", "deleted_by", "deleted_at")
"""Columns a table made before them lacks; `_bring_up_to_date` adds them."""
CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
"""Crockford's base32 alphabet (no I, L, O, U), as ULIDs use it."""


class RuleNotFound(LookupError):
    """No rule has this id."""


class RuleDeleted(RuleNotFound):
    """The rule was deleted (by `rule.deleted_by`, at `rule.deleted_at`); its id is never reused."""

    def __init__(self, rule: ApprovalRule) -> None:
        at = utc_text(rule.deleted_at) if rule.deleted_at else "an unknown time"
        super().__init__(
            f"rule {rule.rule_id!r} was deleted by {rule.deleted_by} at {at}; it decides nothing and "
            "its id is never reused (GET /rules lists the live ones)"
        )
        self.rule = rule


def new_rule_id() -> str:
    """A new rule's id: `rule_` and 26 Crockford base32 characters of 48 bits of milliseconds since
    1970 and 80 random bits (a ULID), so ids sort by time and two are never the same."""
    value = (time.time_ns() // 1_000_000) << 80 | secrets.randbits(80)
    return "rule_" + "".join(CROCKFORD[(value >> shift) & 31] for shift in range(125, -1, -5))


class RuleStore:
    """The saved approval rules (see the module docstring)."""

    def __init__(self, url: str, sealer: Sealer | None = None) -> None:
        """The store at SQLAlchemy `url`, its bodies sealed by `sealer` (in clear by default)."""
        self.url = url
        self._sealer = sealer or Sealer()
        self._engine: Engine | None = None
        self._lock = threading.Lock()

    @classmethod
    def at(cls, url: str | None, data_dir: Path, sealer: Sealer | None = None) -> RuleStore:
        """The store at `url`, or the SQLite file under `data_dir` when it is None."""
        return cls(url or f"sqlite:///{data_dir / 'rules.db'}", sealer)

    @classmethod
    def from_settings(cls, settings: Settings) -> RuleStore:
        """The store of `SYNAPSE_RULES_URL` (or the data dir), sealed with `SYNAPSE_CODEC_KEYS`."""
        return cls.at(settings.rules_url, settings.data_dir, Sealer.of(settings.temporal.codec_keys))

    def _db(self) -> Engine:
        with self._lock:
            if self._engine is None:
                engine = engine_for(self.url, own_file=True)
                create_schema(engine, _create)
                self._engine = engine
            return self._engine

    def close(self) -> None:
        """Close the store's connections (it opens new ones if used again)."""
        with self._lock:
            engine, self._engine = self._engine, None
        if engine is not None:
            engine.dispose()

    def add(self, rule: NewRule) -> ApprovalRule:
        """Save a rule (checked by the caller, `match.problems`); it as saved, with its new id."""
        now = datetime.now(UTC)
        rule_id = new_rule_id()
        with self._db().begin() as db:
            db.execute(
                RULES.insert().values(
                    rule_id=rule_id,
                    tool=rule.tool,
                    scope=str(rule.scope),
                    project=rule.project,
                    user=rule.user,
                    body=self._sealer.seal_text(rule.model_dump_json(), _where(rule_id)),
                    created_at=now,
                )
            )
        return ApprovalRule(**rule.model_dump(), rule_id=rule_id, created_at=now)

    def remove(self, rule_id: str, by: str) -> ApprovalRule:
        """Delete a rule, `by` whom: it stays as a tombstone that decides nothing. It as it was, with
        `deleted_by` and `deleted_at` (`RuleNotFound` when no rule has this id, `RuleDeleted` when it
        was deleted already)."""
        rule = self.get(rule_id)
        now = datetime.now(UTC)
        with self._db().begin() as db:
            done = db.execute(
                RULES.update()
                .where(RULES.c.rule_id == rule_id, RULES.c.deleted_at.is_(None))
                .values(deleted_by=by, deleted_at=now)
            )
        if done.rowcount != 1:  # another process deleted it in between
            self.get(rule_id)
        return rule.model_copy(update={"deleted_by": by, "deleted_at": now})

    def get(self, rule_id: str) -> ApprovalRule:
        """One live rule (`RuleNotFound` when no rule has this id, `RuleDeleted` when it was deleted)."""
        with self._db().connect() as db:
            row = db.execute(select(RULES).where(RULES.c.rule_id == rule_id)).first()
        if row is None:
            raise RuleNotFound(f"no rule {rule_id!r}; GET /rules lists them")
        rule = self._saved(row)
        if rule.deleted_at is not None:
            raise RuleDeleted(rule)
        return rule

    def all(
        self,
        *,
        tool: str | None = None,
        scope: RuleScope | None = None,
        project: str | None = None,
        user: str | None = None,
    ) -> list[ApprovalRule]:
        """The live rules, oldest first, of one tool, scope, project or user when named."""
        query = select(RULES).where(RULES.c.deleted_at.is_(None)).order_by(RULES.c.id)
        for column, value in ((RULES.c.tool, tool), (RULES.c.project, project), (RULES.c.user, user)):
            if value is not None:
                query = query.where(column == value)
        if scope is not None:
            query = query.where(RULES.c.scope == str(scope))
        with self._db().connect() as db:
            return [self._saved(row) for row in db.execute(query)]

    def for_call(self, tool_id: str, context: RuleContext) -> list[ApprovalRule]:
        """The live rules that may decide a call of `tool_id` in this project, for this user."""
        values = {
            "tool": tool_id,
            "any_tool": ANY_TOOL_RULE,
            "project": context.project or None,  # NULL matches no row: no project, no project rules
            "user": context.user or None,
        }
        with self._db().connect() as db:
            return [self._saved(row) for row in db.execute(_FOR_CALL, values)]

    def _saved(self, row: Any) -> ApprovalRule:
        """The rule of a row, its body opened."""
        rule = NewRule.model_validate_json(self._sealer.open_text(row.body, _where(row.rule_id)))
        return ApprovalRule(
            **rule.model_dump(),
            rule_id=row.rule_id,
            created_at=_utc(row.created_at),
            deleted_by=row.deleted_by,
            deleted_at=_utc(row.deleted_at) if row.deleted_at else None,
        )


_FOR_CALL = (
    select(RULES)
    .where(
        RULES.c.deleted_at.is_(None),
        RULES.c.tool.in_([bindparam("tool"), bindparam("any_tool")]),
        or_(
            RULES.c.scope == str(RuleScope.GLOBAL),
            (RULES.c.scope == str(RuleScope.PROJECT)) & (RULES.c.project == bindparam("project")),
            (RULES.c.scope == str(RuleScope.USER)) & (RULES.c.user == bindparam("user")),
        ),
    )
    .order_by(RULES.c.id)
)
"""`for_call`'s query, built once: built per call (an `IN` list, the scopes' clauses) it cost
SQLAlchemy 0.24–1 ms of the worker's CPU per assessment (more with a project and a person to
match), 0.07–0.12 ms with bound values."""


def _create(db: Connection) -> None:
    """Make the table when absent (`create_schema` runs this once per store, in one transaction)."""
    METADATA.create_all(db)
    _bring_up_to_date(db)


def _bring_up_to_date(db: Connection) -> None:
    """Give a table made before rule ids and tombstones their columns; its rules keep their ids
    (`rule_<row number>`). Two processes may open an old SQLite file at once (PostgreSQL's
    `create_schema` lock serialises them): one adding a column the other just added is no error."""
    for name in LATER_COLUMNS:
        if name in _columns(db):
            continue
        kind = RULES.c[name].type.compile(dialect=db.dialect)
        try:
            db.execute(text(f"ALTER TABLE {RULES.name} ADD COLUMN {name} {kind}"))
        except OperationalError:
            if name not in _columns(db):
                raise
    db.execute(
        RULES.update()
        .where(RULES.c.rule_id.is_(None))
        .values(rule_id=literal("rule_") + cast(RULES.c.id, String))
    )
    RULE_IDS.create(db, checkfirst=True)


def _columns(db: Connection) -> set[str]:
    return {column["name"] for column in inspect(db).get_columns(RULES.name)}


def _where(rule_id: str) -> str:
    """Where a rule's sealed body belongs (authenticated with it)."""
    return f"approval_rules.body:{rule_id}"


def _utc(at: datetime) -> datetime:
    return at if at.tzinfo else at.replace(tzinfo=UTC)  # SQLite keeps no zone
