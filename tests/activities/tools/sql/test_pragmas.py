"""PRAGMAs and pragma functions: a read-only one runs freely, every one that can write asks (issue 47).

Each writing form is also run on a scratch SQLite file, to show the form really writes there: the
table is what SQLite does, not what the classifier thinks."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from activities.tools.sql.tool import SqlTool
from contracts import ToolCallRequest

ASKS = [
    "PRAGMA user_version = 42",
    "PRAGMA user_version(42)",
    "PRAGMA user_version=42;",
    "pragma USER_VERSION ( 42 )",
    "PrAgMa\n\tuser_version\n=\n42",
    "PRAGMA/* a comment */user_version/**/(42)",
    "PRAGMA -- a comment\n user_version = 42",
    'PRAGMA "user_version" = 42',
    "PRAGMA [user_version] = 42",
    "PRAGMA `user_version`(42)",
    "PRAGMA main.user_version = 42",
    "PRAGMA main.user_version(42)",
    'PRAGMA "main"."user_version" = 42',
    "PRAGMA user_version = -42",
    "PRAGMA user_version = '42'",
    "PRAGMA user_version; PRAGMA user_version = 42",
    "SELECT 1; PRAGMA user_version(42)",
]
"""Forms that set `user_version` to 42 (or -42) in SQLite."""
ASKS_TOO = [
    "PRAGMA journal_mode = DELETE",
    "PRAGMA journal_mode(DELETE)",
    "PRAGMA foreign_keys = ON",
    "PRAGMA application_id = 7",
    "PRAGMA optimize",
    "PRAGMA wal_checkpoint(TRUNCATE)",
    "PRAGMA incremental_vacuum",
    "PRAGMA shrink_memory",
    "PRAGMA writable_schema = ON",
    "PRAGMA no_such_pragma",
    "SELECT * FROM pragma_optimize",
    "SELECT * FROM main.PRAGMA_OPTIMIZE",
    'SELECT * FROM "pragma_optimize"',
    "SELECT name FROM pragma_table_info('orders') JOIN pragma_optimize(1)",
    "WITH a AS (SELECT * FROM pragma_wal_checkpoint) SELECT * FROM a",
    "SELECT (SELECT count(*) FROM pragma_optimize)",
    "SELECT * FROM pragma_journal_mode('main')",
]
"""Other pragmas that write or do work, or are not known to read."""
FREE = [
    "PRAGMA user_version",
    "PRAGMA user_version;",
    "pragma USER_VERSION",
    "PRAGMA main.user_version",
    "PRAGMA schema_version",
    "PRAGMA page_size",
    "PRAGMA page_count",
    "PRAGMA freelist_count",
    "PRAGMA journal_mode",
    "PRAGMA database_list",
    "PRAGMA compile_options",
    "PRAGMA collation_list",
    "PRAGMA function_list",
    "PRAGMA pragma_list",
    "PRAGMA table_list",
    "PRAGMA table_info(orders)",
    "PRAGMA table_info = orders",
    "PRAGMA main.table_info('orders')",
    'PRAGMA table_xinfo("orders")',
    "PRAGMA index_list(orders)",
    "PRAGMA foreign_key_list(orders)",
    "PRAGMA foreign_key_check",
    "PRAGMA integrity_check",
    "PRAGMA quick_check(10)",
    "SELECT * FROM pragma_table_info('orders')",
    "SELECT name FROM pragma_table_info('orders') WHERE pk = 1",
    "SELECT * FROM pragma_user_version",
    "SELECT * FROM main.pragma_index_list('orders')",
    "SELECT o.id, p.name FROM orders AS o, pragma_table_info('orders') AS p",
]
"""Pragmas and pragma functions that only read."""


@pytest.fixture(scope="module")
def tool(tmp_path_factory: pytest.TempPathFactory) -> SqlTool:
    return SqlTool(f"sqlite:///{tmp_path_factory.mktemp('pragmas') / 'demo.db'}")


def assess(tool: SqlTool, sql: str) -> tuple[bool, str]:
    return tool.assess(ToolCallRequest(tool_id="sql", arguments={"sql": sql}), {})


@pytest.mark.parametrize("sql", ASKS)
def test_every_form_of_setting_a_pragma_asks(tool: SqlTool, sql: str, tmp_path: Path) -> None:
    needs_approval, reason = assess(tool, sql)

    assert needs_approval, f"{sql!r} ran freely: {reason}"
    with sqlite3.connect(tmp_path / "scratch.db") as scratch:
        scratch.executescript(sql)
        assert abs(scratch.execute("PRAGMA user_version").fetchone()[0]) == 42, "the form writes"


@pytest.mark.parametrize("sql", ASKS_TOO)
def test_a_pragma_not_known_to_only_read_asks(tool: SqlTool, sql: str) -> None:
    needs_approval, reason = assess(tool, sql)

    assert needs_approval, f"{sql!r} ran freely: {reason}"


@pytest.mark.parametrize("sql", FREE)
def test_a_pragma_that_only_reads_runs_freely_and_answers(tool: SqlTool, sql: str) -> None:
    needs_approval, reason = assess(tool, sql)

    assert not needs_approval, reason
    result = tool.database.run(sql)
    assert result.ok, result.error


def test_a_free_pragma_leaves_the_database_as_it_was(tool: SqlTool) -> None:
    before = tool.database.run("PRAGMA user_version")

    for sql in FREE:
        tool.database.run(sql)

    assert tool.database.run("PRAGMA user_version").content == before.content
    assert tool.database.run("SELECT count(*) FROM orders").content["rows"] == [[8]]
