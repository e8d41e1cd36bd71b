"""What a SQL string is, according to sqlglot: its kind, whether it changes data, whether it is SQL at all.

Pure functions without I/O, shared by the `sql` tool (approval policy) and the demo agent
(which routes chat text that is a real SQL statement to the `sql` tool).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache, wraps
from typing import Protocol, TypeVar

import sqlglot
from sqlglot import TokenType, exp

from . import pragmas

# Statement words the demo agent accepts as the start of a SQL message; anything else is chat.
_STATEMENT_WORDS = frozenset(
    {"SELECT", "INSERT", "UPDATE", "DELETE", "CREATE", "DROP", "ALTER", "WITH", "PRAGMA"}
)
# Expression types that are real statements (as opposed to a bare column, alias or literal).
_STATEMENT_TYPES: tuple[type[exp.Expr], ...] = (
    exp.Query,
    exp.Insert,
    exp.Update,
    exp.Delete,
    exp.Create,
    exp.Drop,
    exp.Alter,
    exp.Pragma,
)
# Nodes that write data or schema wherever they appear (e.g. a DELETE inside a CTE).
_WRITING_NODES: tuple[type[exp.Expr], ...] = (
    exp.Insert,
    exp.Update,
    exp.Delete,
    exp.Merge,
    exp.Create,
    exp.Drop,
    exp.Alter,
    exp.Command,
)
# SQLAlchemy dialect names whose sqlglot dialect is spelt differently.
_SQLGLOT_DIALECTS = {"postgresql": "postgres", "mssql": "tsql"}


@dataclass(frozen=True)
class SqlClassification:
    """What a SQL string does.

    Attributes:
        kind: Statement kind in upper case: `SELECT`, `INSERT`, `UPDATE`, `DELETE`, `CREATE`,
            `DROP`, `ALTER`, `PRAGMA`, ...; `MULTIPLE` for several statements, `UNKNOWN` when
            sqlglot cannot parse it.
        destructive: True unless the statement provably only reads (fail safe: unknown is True).
        statements: Number of statements in the string (0 when unparseable).
        table: The first table the statement names (None: none, or several statements).
    """

    kind: str
    destructive: bool
    statements: int = 1
    table: str | None = None

    @property
    def reason(self) -> str:
        """One line for people: why the statement does or does not need approval."""
        if self.kind == "MULTIPLE":
            return f"{self.statements} statements in one call; only one statement runs at a time"
        if self.kind == "UNKNOWN":
            return "the statement could not be parsed, so it is treated as changing data"
        if not self.destructive:
            return f"{self.kind} is read-only"
        if self.kind in {"CREATE", "DROP", "ALTER"}:
            return f"{self.kind} statement changes the schema"
        return f"{self.kind} statement changes data"


def sqlglot_dialect(sqlalchemy_dialect: str) -> str | None:
    """The sqlglot dialect for a SQLAlchemy dialect name (`postgresql` -> `postgres`)."""
    name = _SQLGLOT_DIALECTS.get(sqlalchemy_dialect, sqlalchemy_dialect)
    try:
        sqlglot.Dialect.get_or_raise(name)
    except ValueError:
        return None
    return name


CACHED_CHARS = 4096
"""Statements up to this long are classified once per worker: a tool call's SQL is read by the
agent, the assessment, the rules and the request's title (five parses of one INSERT were a fifth
of a session start's CPU)."""


def _parse_now(sql: str, dialect: str | None) -> tuple[exp.Expr, ...] | None:
    """The statements of `sql`, or None when sqlglot cannot parse it."""
    try:
        parsed = sqlglot.parse(sql, read=dialect)
    except Exception:  # sqlglot raises several error types on odd input; all mean "not parseable"
        return None
    return tuple(statement for statement in parsed if statement is not None)


_parse_remembered = lru_cache(maxsize=256)(_parse_now)


def _parse(sql: str, dialect: str | None) -> tuple[exp.Expr, ...] | None:
    """`_parse_now`, remembered for the last 256 texts up to `CACHED_CHARS` long: the agent
    (`is_sql_statement`) and the assessment (`classify`) read the same statement in one step. The
    trees are shared: callers only read them."""
    return _parse_remembered(sql, dialect) if len(sql) <= CACHED_CHARS else _parse_now(sql, dialect)


def _kind(statement: exp.Expr) -> str:
    if isinstance(statement, exp.Condition | exp.Alias | exp.Identifier):
        return "UNKNOWN"  # a bare column, literal or alias: English, not a statement
    if isinstance(statement, exp.Query):
        return "SELECT"
    if isinstance(statement, exp.Command):
        return str(statement.this).upper() or "UNKNOWN"
    return type(statement).__name__.upper()


def _reads_only(statement: exp.Expr, sql: str, dialect: str | None) -> bool:
    if isinstance(statement, exp.Query):
        if statement.find(*_WRITING_NODES) is not None or not pragmas.functions_read_only(statement):
            return False
        return not (isinstance(statement, exp.Select) and statement.args.get("locks"))
    if isinstance(statement, exp.Pragma):
        return pragmas.statement_reads_only(sql, dialect)
    return False


T = TypeVar("T", covariant=True)


class _Reading(Protocol[T]):
    """A pure reading of a text in a SQL dialect."""

    def __call__(self, text: str, dialect: str | None = "sqlite", /) -> T: ...


def _remembered(read: _Reading[T]) -> _Reading[T]:
    """`read`, remembered for the last 1,024 texts up to `CACHED_CHARS` long (a pure function of
    the text and the dialect; longer texts are read every time)."""
    cached = lru_cache(maxsize=1024)(read)

    @wraps(read)
    def remembered(text: str, dialect: str | None = "sqlite") -> T:
        return cached(text, dialect) if len(text) <= CACHED_CHARS else read(text, dialect)

    return remembered


@_remembered
def classify(sql: str, dialect: str | None = "sqlite") -> SqlClassification:
    """Classify a SQL string for the approval policy.

    Only a single statement that provably reads (SELECT/UNION/WITH ... SELECT without writes,
    locks or a writing pragma function, or a read-only PRAGMA: `pragmas`) is non-destructive; everything else, including several
    statements and unparseable text, is destructive so that it needs a person's approval.

    Args:
        sql: The SQL text.
        dialect: sqlglot dialect name; None for sqlglot's generic dialect.

    Returns:
        The statement kind and whether it is destructive.
    """
    statements = _parse(sql, dialect)
    if not statements:
        return SqlClassification(kind="UNKNOWN", destructive=True, statements=0)
    if len(statements) > 1:
        return SqlClassification(kind="MULTIPLE", destructive=True, statements=len(statements))
    statement = statements[0]
    table = statement.find(exp.Table)
    return SqlClassification(
        kind=_kind(statement),
        destructive=not _reads_only(statement, sql, dialect),
        table=table.name.lower() if table is not None and table.name else None,
    )


def _is_plausible(statement: exp.Expr) -> bool:
    """False for parses that only English produces, e.g. `select everything please`."""
    if not isinstance(statement, _STATEMENT_TYPES):
        return False
    if isinstance(statement, exp.Select):
        if not statement.expressions:
            return False
        # A top-level SELECT without FROM cannot name a column: that is a sentence, not a query.
        return statement.args.get("from_") is not None or statement.find(exp.Column) is None
    if isinstance(statement, exp.Update):
        return bool(statement.expressions)
    if isinstance(statement, exp.Insert):
        return statement.expression is not None or bool(statement.args.get("default"))
    return True


def _keywords_complete(sql: str, dialect: str | None) -> bool:
    """DELETE must be followed by FROM and INSERT by INTO (or OR ...), as SQLite requires."""
    tokens = sqlglot.tokenize(sql, read=dialect)
    required = {TokenType.DELETE: {TokenType.FROM}, TokenType.INSERT: {TokenType.INTO, TokenType.OR}}
    for token, following in zip(tokens, [*tokens[1:], None], strict=True):
        needed = required.get(token.token_type)
        if needed and (following is None or following.token_type not in needed):
            return False
    return True


@_remembered
def is_sql_statement(text: str, dialect: str | None = "sqlite") -> bool:
    """Whether chat text is a real SQL statement rather than English.

    Strict on purpose: the text must start with a statement word (SELECT, INSERT, UPDATE,
    DELETE, CREATE, DROP, ALTER, WITH, PRAGMA), parse with sqlglot into statements (not a bare
    column, alias or a `Command` fallback), and look complete (`DELETE FROM`, `UPDATE ... SET`,
    a SELECT that names columns has a FROM). "delete everything please" is not SQL.

    Args:
        text: The message text.
        dialect: sqlglot dialect name.

    Returns:
        True when the text should go to the `sql` tool.
    """
    match = re.match(r"\s*([A-Za-z]+)\b", text)
    if match is None or match.group(1).upper() not in _STATEMENT_WORDS:
        return False
    statements = _parse(text, dialect)
    if not statements or not all(_is_plausible(statement) for statement in statements):
        return False
    try:
        return _keywords_complete(text, dialect)
    except Exception:  # a tokenizer error means it is not SQL we can run
        return False
