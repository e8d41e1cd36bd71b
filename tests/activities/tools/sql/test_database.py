"""The `sql` tool: classification, seeding, results, errors and exactly-once application, on SQLite
and on PostgreSQL (tests/postgres.py; those cases are skipped, saying why, without PostgreSQL)."""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import time
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import sqlglot
from sqlalchemy import Connection, inspect, text

from activities.tools.sql.database import PAUSE_FILE_ENV, SEED_ORDERS, SqlDatabase, classify
from activities.tools.sql.syntax import CACHED_CHARS, is_sql_statement
from activities.tools.sql.tool import SqlTool
from core.database import engine_for

DELETE_CANCELLED = "DELETE FROM orders WHERE status = 'cancelled'"


@pytest.fixture
def tool(url: str) -> Iterator[SqlDatabase]:
    sql_tool = SqlDatabase(url)
    yield sql_tool
    sql_tool.close()


@pytest.fixture
def scalar(url: str) -> Iterator[Callable[[str], object]]:
    """Read straight from the database, bypassing the tool."""
    engine = engine_for(url)

    def read(sql: str) -> object:
        with engine.connect() as db:
            return db.execute(text(sql)).scalar()

    yield read
    engine.dispose()


@pytest.mark.parametrize(
    ("sql", "kind", "destructive"),
    [
        ("SELECT * FROM orders", "SELECT", False),
        ("select id from orders union select id from orders", "SELECT", False),
        ("WITH c AS (SELECT 1 AS n) SELECT n FROM c", "SELECT", False),
        ("PRAGMA table_info(orders)", "PRAGMA", False),
        ("PRAGMA foreign_keys = ON", "PRAGMA", True),
        ("INSERT INTO orders VALUES (9, 'Ivan', 1.0, 'paid')", "INSERT", True),
        ("UPDATE orders SET status = 'paid'", "UPDATE", True),
        (DELETE_CANCELLED, "DELETE", True),
        ("CREATE TABLE t (a INT)", "CREATE", True),
        ("DROP TABLE orders", "DROP", True),
        ("ALTER TABLE orders ADD COLUMN note TEXT", "ALTER", True),
        ("VACUUM", "VACUUM", True),
        ("SELECT 1; DELETE FROM orders", "MULTIPLE", True),
        ("SELEC * FROM orders", "UNKNOWN", True),
        ("hello there", "UNKNOWN", True),
    ],
)
def test_classify(sql: str, kind: str, destructive: bool) -> None:
    classification = classify(sql)

    assert (classification.kind, classification.destructive) == (kind, destructive)


def test_classify_gives_people_a_reason() -> None:
    assert classify(DELETE_CANCELLED).reason == "DELETE statement changes data"
    assert classify("SELECT 1").reason == "SELECT is read-only"
    assert classify("DROP TABLE orders").reason == "DROP statement changes the schema"
    assert "one statement runs at a time" in classify("SELECT 1; SELECT 2").reason


def test_the_agent_and_the_assessment_parse_a_statement_once_between_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    parses: list[str] = []
    parse = sqlglot.parse

    def counted(sql: str, read: str | None = None) -> Any:
        parses.append(sql)
        return parse(sql, read=read)

    monkeypatch.setattr(sqlglot, "parse", counted)
    statement = f"INSERT INTO orders (status) VALUES ('{uuid.uuid4().hex}')"
    assert is_sql_statement(statement), "the demo agent reads it as SQL"
    assert classify(statement).destructive, "the assessment asks for it"
    assert parses == [statement], "one parse, shared"
    long = f"SELECT 1 -- {'x' * CACHED_CHARS}"
    assert not classify(long).destructive and not classify(long).destructive
    assert parses.count(long) == 2, "a long text is read each time, not kept"


def test_first_use_seeds_orders(tool: SqlDatabase) -> None:
    result = tool.run("SELECT * FROM orders ORDER BY id")

    assert result.ok, result.error
    assert result.content["columns"] == ["id", "customer", "amount", "status"]
    assert [tuple(row) for row in result.content["rows"]] == SEED_ORDERS
    assert result.content["rowcount"] == len(SEED_ORDERS)
    assert result.content["statement"] == "SELECT"
    assert "truncated" not in result.content and "note" not in result.content, "nothing was cut"
    assert sum(1 for row in SEED_ORDERS if row[3] == "cancelled") == 3


def test_first_use_creates_the_sqlite_files_directory(tmp_path: Path) -> None:
    database = tmp_path / "new" / "dir" / "demo.db"
    tool = SqlDatabase(f"sqlite:///{database}")
    try:
        assert tool.run("SELECT count(*) FROM orders").content["rows"] == [[len(SEED_ORDERS)]]
    finally:
        tool.close()
    assert database.is_file()


@pytest.mark.parametrize(("seed_demo", "mode"), [(True, "wal"), (False, "delete")])
def test_only_the_demo_file_is_put_in_wal_mode(tmp_path: Path, seed_demo: bool, mode: str) -> None:
    # The demo database is Synapse's own; a SQLite file of the user's keeps the mode it has.
    database = tmp_path / "mine.db"
    with sqlite3.connect(database) as db:
        db.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY)")
    tool = SqlDatabase(f"sqlite:///{database}", seed_demo=seed_demo)
    try:
        applied = tool.run("INSERT INTO notes (id) VALUES (1)", interaction_id="tool_1")
    finally:
        tool.close()
    assert applied.ok and applied.content["rowcount"] == 1
    with sqlite3.connect(database) as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == mode
        assert db.execute("SELECT count(*) FROM notes").fetchone()[0] == 1


def test_a_database_that_is_not_the_demo_gets_only_the_claims_table(url: str) -> None:
    tool = SqlDatabase(url, seed_demo=False)
    try:
        missing = tool.run("SELECT * FROM orders")
        created = tool.run("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)", interaction_id="tool_1")
    finally:
        tool.close()

    assert missing.ok is False and missing.error is not None and "orders" in missing.error
    assert created.ok
    engine = engine_for(url)
    try:
        assert sorted(inspect(engine).get_table_names()) == ["notes", "synapse_tool_runs"]
    finally:
        engine.dispose()


def test_several_processes_preparing_at_once_create_and_seed_once(url: str) -> None:
    tools = [SqlDatabase(url) for _ in range(6)]
    try:
        with ThreadPoolExecutor(len(tools)) as pool:
            list(pool.map(lambda tool: tool.prepare(), tools))
        counts = [tool.run("SELECT count(*) FROM orders").content["rows"] for tool in tools]
    finally:
        for tool in tools:
            tool.close()

    assert counts == [[[len(SEED_ORDERS)]]] * len(tools)


def test_seeding_happens_only_when_the_table_does_not_exist(tool: SqlDatabase, url: str) -> None:
    assert tool.run("DELETE FROM orders").ok

    fresh = SqlDatabase(url)
    try:
        assert fresh.run("SELECT count(*) FROM orders").content["rows"] == [[0]]
    finally:
        fresh.close()


def test_delete_reports_affected_rows(tool: SqlDatabase, scalar: Callable[[str], object]) -> None:
    result = tool.run(DELETE_CANCELLED)

    assert result.ok
    assert result.content == {"rowcount": 3, "statement": "DELETE"}
    assert result.metadata == {"destructive": True}
    assert scalar("SELECT count(*) FROM orders") == 5


def test_destructive_statement_with_an_interaction_id_is_applied_once(
    tool: SqlDatabase, scalar: Callable[[str], object]
) -> None:
    first = tool.run(DELETE_CANCELLED, interaction_id="session:s/tool_1")
    # A new cancelled order: running the DELETE again would remove it.
    assert tool.run("INSERT INTO orders VALUES (20, 'Zoe', 5.0, 'cancelled')").ok

    second = tool.run(DELETE_CANCELLED, interaction_id="session:s/tool_1")

    assert first.content["rowcount"] == 3 and "replayed" not in first.metadata
    assert second.metadata["replayed"] is True
    assert second.content == first.content
    assert scalar("SELECT count(*) FROM orders WHERE status = 'cancelled'") == 1
    assert scalar("SELECT tool_id FROM synapse_tool_runs WHERE interaction_id = 'session:s/tool_1'") == "sql"


def test_another_interaction_id_runs_the_statement_again(
    tool: SqlDatabase, scalar: Callable[[str], object]
) -> None:
    tool.run(DELETE_CANCELLED, interaction_id="tool_1")
    tool.run("INSERT INTO orders VALUES (20, 'Zoe', 5.0, 'cancelled')")

    again = tool.run(DELETE_CANCELLED, interaction_id="tool_2")

    assert again.content["rowcount"] == 1 and "replayed" not in again.metadata
    assert scalar("SELECT count(*) FROM orders WHERE status = 'cancelled'") == 0


def test_rows_past_max_rows_are_cut_with_a_note(url: str) -> None:
    small = SqlDatabase(url, max_rows=3)
    try:
        result = small.run("SELECT id FROM orders ORDER BY id")
    finally:
        small.close()

    assert result.content["rows"] == [[1], [2], [3]]
    assert result.content["truncated"] is True
    assert result.content["rowcount"] == 8
    assert result.content["note"] == "showing the first 3 of 8 rows"


def test_results_carry_only_what_they_have_and_still_read_as_before(tool: SqlDatabase) -> None:
    """A change, an empty SELECT and rows read in chat as they did when every field was written;
    a result written with the empty fields (an older history) reads the same."""
    changed = tool.run("UPDATE orders SET status = 'paid' WHERE id = 1")
    empty = tool.run("SELECT id FROM orders WHERE status = 'nobody'")
    rows = tool.run("SELECT id FROM orders WHERE id < 3 ORDER BY id")
    older = {
        "columns": [],
        "rows": [],
        "rowcount": 1,
        "truncated": False,
        "note": None,
        "statement": "UPDATE",
    }

    assert changed.content == {"rowcount": 1, "statement": "UPDATE"}
    assert empty.content == {"columns": ["id"], "rows": [], "rowcount": 0, "statement": "SELECT"}
    assert [SqlTool.describe(result.content) for result in (changed, empty, rows)] == [
        "UPDATE done: 1 row affected.",
        "SELECT returned 0 rows.",
        "SELECT returned 2 rows:\nid\n1\n2",
    ]
    assert [SqlTool.said(result.content) for result in (changed, empty, rows)] == [
        "1 row affected",
        "0 rows",
        "2 rows",
    ]
    assert (
        SqlTool.describe(older) == "UPDATE done: 1 row affected." and SqlTool.said(older) == "1 row affected"
    )


@pytest.mark.parametrize(
    ("sql", "sqlite", "postgresql"),
    [
        ("SELECT * FROM foo", "no such table: foo", 'relation "foo" does not exist'),
        ("SELEC * FROM orders", 'near "SELEC": syntax error', 'syntax error at or near "SELEC"'),
        (
            "INSERT INTO orders VALUES (1, 'Dup', 1.0, 'paid')",
            "UNIQUE constraint failed: orders.id",
            'duplicate key value violates unique constraint "orders_pkey"',
        ),
        (
            "INSERT INTO orders (id) VALUES (30)",
            "NOT NULL constraint failed: orders.customer",
            'null value in column "customer" of relation "orders" violates not-null constraint',
        ),
    ],
)
def test_sql_errors_are_results_naming_the_statement(
    tool: SqlDatabase, backend: str, sql: str, sqlite: str, postgresql: str
) -> None:
    result = tool.run(sql, interaction_id="tool_9")
    message = {"sqlite": sqlite, "postgresql": postgresql}[backend]

    assert result.ok is False
    assert result.error is not None and message in result.error, result.error
    assert result.error.endswith(f"(statement: {sql})")


def test_a_failed_statement_is_not_recorded_as_applied(
    tool: SqlDatabase, scalar: Callable[[str], object]
) -> None:
    tool.run("INSERT INTO orders VALUES (1, 'Dup', 1.0, 'paid')", interaction_id="tool_9")

    assert scalar("SELECT count(*) FROM synapse_tool_runs") == 0


def test_several_statements_are_refused_and_nothing_runs(
    tool: SqlDatabase, scalar: Callable[[str], object]
) -> None:
    result = tool.run("DELETE FROM orders; DROP TABLE orders", interaction_id="tool_3")

    assert result.ok is False
    assert result.error is not None and "2 statements given; send one statement at a time" in result.error
    assert scalar("SELECT count(*) FROM orders") == 8


def test_user_sql_is_sent_verbatim_colons_and_percent_signs_included(tool: SqlDatabase) -> None:
    result = tool.run("SELECT 'meet at :noon' AS note")
    like = tool.run(
        "SELECT customer FROM orders WHERE customer LIKE 'A%' OR status LIKE '%ship%' ORDER BY id"
    )
    percent = tool.run("UPDATE orders SET status = '100% paid' WHERE id = 1", interaction_id="tool_8")

    assert result.content["rows"] == [["meet at :noon"]]
    assert like.content["rows"] == [["Alice"], ["Carol"], ["Heidi"]]
    assert percent.ok and percent.content["rowcount"] == 1, percent.error
    assert tool.run("SELECT status FROM orders WHERE id = 1").content["rows"] == [["100% paid"]]


def test_ddl_reports_no_row_count(tool: SqlDatabase, scalar: Callable[[str], object]) -> None:
    result = tool.run("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)", interaction_id="tool_4")

    assert result.ok and result.content["statement"] == "CREATE" and result.content["rowcount"] is None
    assert scalar("SELECT count(*) FROM notes") == 0


async def wait_for(condition: Callable[[], bool], what: str) -> None:
    """Poll `condition` until it holds, for at most 10 s (never a bare sleep for state)."""
    deadline = time.monotonic() + 10
    while not condition():
        assert time.monotonic() < deadline, f"{what} did not happen in 10s"
        await asyncio.sleep(0.02)


@pytest.fixture
def pause_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> Path:
    """An existing pause file named by the test-only env var; destructive statements wait on it."""
    pause = tmp_path / "pause"
    pause.touch()
    monkeypatch.setenv(PAUSE_FILE_ENV, str(pause))
    caplog.set_level(logging.WARNING, logger="activities.tools.sql.database")
    return pause


async def test_pause_file_holds_the_commit_until_it_is_removed(
    tool: SqlDatabase, scalar: Callable[[str], object], pause_file: Path, caplog: pytest.LogCaptureFixture
) -> None:
    tool.run("SELECT 1")  # create and seed before pausing

    running = asyncio.create_task(asyncio.to_thread(tool.run, DELETE_CANCELLED, "tool_5"))
    await wait_for(lambda: "pausing before commit" in caplog.text, "the pause")

    assert scalar("SELECT count(*) FROM orders") == 8  # executed, not committed
    await asyncio.to_thread(pause_file.unlink)
    result = await asyncio.wait_for(running, timeout=10)

    assert result.ok and result.content["rowcount"] == 3
    assert scalar("SELECT count(*) FROM orders") == 5


async def test_a_concurrent_retry_waits_for_the_first_attempt_and_replays_it(
    tool: SqlDatabase,
    url: str,
    scalar: Callable[[str], object],
    pause_file: Path,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A second worker's retry claims the interaction while the first attempt has not committed:
    # its claim waits for the first attempt's transaction (SQLite's lock, PostgreSQL's row), then
    # fails on the key, and the retry answers with the first attempt's stored result.
    other = SqlDatabase(url)
    other.run("SELECT 1")
    claims: list[str | None] = []
    real_claim = other._claim

    def counted_claim(conn: Connection, interaction_id: str | None) -> None:
        claims.append(interaction_id)
        real_claim(conn, interaction_id)

    monkeypatch.setattr(other, "_claim", counted_claim)
    first = asyncio.create_task(asyncio.to_thread(tool.run, DELETE_CANCELLED, "tool_6"))
    await wait_for(lambda: "pausing before commit" in caplog.text, "the first attempt's pause")
    second = asyncio.create_task(asyncio.to_thread(other.run, DELETE_CANCELLED, "tool_6"))
    await wait_for(lambda: len(claims) == 1, "the retry's claim")
    await asyncio.to_thread(pause_file.unlink)
    results = await asyncio.wait_for(asyncio.gather(first, second), timeout=10)
    other.close()

    assert [r.metadata.get("replayed", False) for r in results] == [False, True]
    assert results[1].content == results[0].content
    assert scalar("SELECT count(*) FROM orders") == 5
