"""Which SQLite PRAGMAs only read: the `sql` tool runs those freely and asks for every other one.

A PRAGMA writes when it is given a value, in any of SQLite's spellings: `PRAGMA user_version = 42`,
`PRAGMA user_version(42)`, `PRAGMA main.user_version = 42`, with any case, quotes, comments or
whitespace. So the rule is read from sqlglot's tokens, not from the text: after `PRAGMA` and the
(optionally schema-qualified) name, anything but a closing `;` is an argument. A pragma on
`WITH_ARGUMENT` only ever reads, whatever its argument names (a table, an index, a row limit); one
on `WITHOUT_ARGUMENT` reads only when it has none; every other pragma asks (`optimize`,
`wal_checkpoint`, `incremental_vacuum` and `shrink_memory` write or do work even without one).

The same lists govern the table-valued pragma functions a SELECT may name (`pragma_table_info('t')`):
SQLite's function runs the pragma itself, and one exists for every pragma that returns rows,
`pragma_optimize` included, so a `pragma_*` table not on a list makes the SELECT ask. The
functions of `WITHOUT_ARGUMENT` pragmas take no argument at all (SQLite refuses one), so they read.
"""

from __future__ import annotations

import sqlglot
from sqlglot import TokenType, exp

WITH_ARGUMENT = frozenset(
    {
        "table_info",
        "table_xinfo",
        "table_list",
        "index_list",
        "index_info",
        "index_xinfo",
        "foreign_key_list",
        "foreign_key_check",
        "integrity_check",
        "quick_check",
    }
)
"""Pragmas that read whatever their argument: it names what to describe or check."""
WITHOUT_ARGUMENT = frozenset(
    {
        "user_version",
        "schema_version",
        "application_id",
        "data_version",
        "page_size",
        "page_count",
        "freelist_count",
        "encoding",
        "journal_mode",
        "foreign_keys",
        "database_list",
        "compile_options",
        "collation_list",
        "function_list",
        "module_list",
        "pragma_list",
    }
)
"""Pragmas that read when given no value (with one, most of them set it)."""
FUNCTION_PREFIX = "pragma_"


def reads_only(name: str, has_argument: bool) -> bool:
    """Whether the pragma `name` (any case) with or without an argument provably only reads."""
    name = name.lower()
    return name in WITH_ARGUMENT or (name in WITHOUT_ARGUMENT and not has_argument)


def statement_reads_only(sql: str, dialect: str | None) -> bool:
    """Whether `sql`, one `PRAGMA` statement, only reads (False when its tokens cannot be read)."""
    try:
        tokens = sqlglot.tokenize(sql, read=dialect)
    except Exception:  # sqlglot raises several error types on odd input; unreadable asks
        return False
    while tokens and tokens[-1].token_type == TokenType.SEMICOLON:
        tokens.pop()
    if len(tokens) < 2 or tokens[0].token_type != TokenType.PRAGMA:
        return False
    name_at = 3 if len(tokens) > 3 and tokens[2].token_type == TokenType.DOT else 1
    if name_at >= len(tokens):
        return False
    return reads_only(tokens[name_at].text, has_argument=len(tokens) > name_at + 1)


def functions_read_only(statement: exp.Expr) -> bool:
    """Whether every table-valued pragma function `statement` names (`FROM pragma_table_info('t')`,
    `main.pragma_user_version`, quoted or not) is one of a read-only pragma."""
    for table in statement.find_all(exp.Table):
        call = table.this
        if isinstance(call, exp.Anonymous):
            name, has_argument = str(call.name), bool(call.expressions)
        else:
            name, has_argument = table.name, False
        if name.lower().startswith(FUNCTION_PREFIX) and not reads_only(
            name[len(FUNCTION_PREFIX) :], has_argument
        ):
            return False
    return True
