"""The `sql` tool: classification, seeding, results, errors and exactly-once application."""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from activities.tools.sql.database import PAUSE_FILE_ENV, SEED_ORDERS, SqlDatabase, classify
from contracts import ToolResult
from core.settings import Settings

DELETE_CANCELLED = "DELETE FROM orders WHERE status = 'cancelled'"


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(data_dir=tmp_path / "data")


@pytest.fixture
def tool(settings: Settings) -> Iterator[SqlDatabase]:
    sql_tool = SqlDatabase(settings.demo_db_url, max_rows=settings.tools.sql_max_rows)
    yield sql_tool
    sql_tool.close()


def db_path(settings: Settings) -> Path:
    return settings.data_dir / "demo.db"


def scalar(settings: Settings, sql: str) -> object:
    """Read straight from the database file, bypassing the tool."""
    with sqlite3.connect(db_path(settings)) as conn:
        return conn.execute(sql).fetchone()[0]


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


def test_first_use_creates_the_directory_and_seeds_orders(tool: SqlDatabase, settings: Settings) -> None:
    result = tool.run("SELECT * FROM orders ORDER BY id")

    assert result.ok, result.error
    assert result.content["columns"] == ["id", "customer", "amount", "status"]
    assert [tuple(row) for row in result.content["rows"]] == SEED_ORDERS
    assert result.content["rowcount"] == len(SEED_ORDERS)
    assert result.content["statement"] == "SELECT"
    assert result.content["truncated"] is False
    assert db_path(settings).is_file()
    assert sum(1 for row in SEED_ORDERS if row[3] == "cancelled") == 3


def test_seeding_happens_only_when_the_table_does_not_exist(tool: SqlDatabase, settings: Settings) -> None:
    assert tool.run("DELETE FROM orders").ok

    fresh = SqlDatabase(settings.demo_db_url)
    try:
        assert fresh.run("SELECT count(*) FROM orders").content["rows"] == [[0]]
    finally:
        fresh.close()


def test_delete_reports_affected_rows(tool: SqlDatabase, settings: Settings) -> None:
    result = tool.run(DELETE_CANCELLED)

    assert result.ok
    assert result.content == {
        "columns": [],
        "rows": [],
        "rowcount": 3,
        "truncated": False,
        "note": None,
        "statement": "DELETE",
    }
    assert scalar(settings, "SELECT count(*) FROM orders") == 5


def test_destructive_statement_with_an_interaction_id_is_applied_once(
    tool: SqlDatabase, settings: Settings
) -> None:
    first = tool.run(DELETE_CANCELLED, interaction_id="session:s/tool_1")
    # A new cancelled order: running the DELETE again would remove it.
    assert tool.run("INSERT INTO orders VALUES (20, 'Zoe', 5.0, 'cancelled')").ok

    second = tool.run(DELETE_CANCELLED, interaction_id="session:s/tool_1")

    assert first.content["rowcount"] == 3 and "replayed" not in first.metadata
    assert second.metadata["replayed"] is True
    assert second.content == first.content
    assert scalar(settings, "SELECT count(*) FROM orders WHERE status = 'cancelled'") == 1
    assert (
        scalar(settings, "SELECT tool_id FROM synapse_tool_runs WHERE interaction_id = 'session:s/tool_1'")
        == "sql"
    )


def test_another_interaction_id_runs_the_statement_again(tool: SqlDatabase, settings: Settings) -> None:
    tool.run(DELETE_CANCELLED, interaction_id="tool_1")
    tool.run("INSERT INTO orders VALUES (20, 'Zoe', 5.0, 'cancelled')")

    again = tool.run(DELETE_CANCELLED, interaction_id="tool_2")

    assert again.content["rowcount"] == 1 and "replayed" not in again.metadata
    assert scalar(settings, "SELECT count(*) FROM orders WHERE status = 'cancelled'") == 0


def test_rows_past_max_rows_are_cut_with_a_note(settings: Settings) -> None:
    small = SqlDatabase(settings.demo_db_url, max_rows=3)
    try:
        result = small.run("SELECT id FROM orders ORDER BY id")
    finally:
        small.close()

    assert result.content["rows"] == [[1], [2], [3]]
    assert result.content["truncated"] is True
    assert result.content["rowcount"] == 8
    assert result.content["note"] == "showing the first 3 of 8 rows"


@pytest.mark.parametrize(
    ("sql", "message"),
    [
        ("SELECT * FROM foo", "no such table: foo (statement: SELECT * FROM foo)"),
        ("SELEC * FROM orders", 'near "SELEC": syntax error (statement: SELEC * FROM orders)'),
        ("INSERT INTO orders VALUES (1, 'Dup', 1.0, 'paid')", "UNIQUE constraint failed: orders.id"),
        ("INSERT INTO orders (id) VALUES (30)", "NOT NULL constraint failed: orders.customer"),
    ],
)
def test_sql_errors_are_results_naming_the_statement(tool: SqlDatabase, sql: str, message: str) -> None:
    result = tool.run(sql, interaction_id="tool_9")

    assert result.ok is False
    assert result.error is not None and message in result.error


def test_a_failed_statement_is_not_recorded_as_applied(tool: SqlDatabase, settings: Settings) -> None:
    tool.run("INSERT INTO orders VALUES (1, 'Dup', 1.0, 'paid')", interaction_id="tool_9")

    assert scalar(settings, "SELECT count(*) FROM synapse_tool_runs") == 0


def test_several_statements_are_refused_and_nothing_runs(tool: SqlDatabase, settings: Settings) -> None:
    result = tool.run("DELETE FROM orders; DROP TABLE orders", interaction_id="tool_3")

    assert result.ok is False
    assert result.error is not None and "2 statements given; send one statement at a time" in result.error
    assert scalar(settings, "SELECT count(*) FROM orders") == 8


def test_user_sql_is_sent_verbatim_colons_included(tool: SqlDatabase) -> None:
    result = tool.run("SELECT 'meet at :noon' AS note")

    assert result.content["rows"] == [["meet at :noon"]]


def test_ddl_reports_no_row_count(tool: SqlDatabase, settings: Settings) -> None:
    result = tool.run("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)", interaction_id="tool_4")

    assert result.ok and result.content["statement"] == "CREATE" and result.content["rowcount"] is None
    assert scalar(settings, "SELECT count(*) FROM notes") == 0


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
    tool: SqlDatabase, settings: Settings, pause_file: Path, caplog: pytest.LogCaptureFixture
) -> None:
    tool.run("SELECT 1")  # create and seed before pausing

    running = asyncio.create_task(asyncio.to_thread(tool.run, DELETE_CANCELLED, "tool_5"))
    await wait_for(lambda: "pausing before commit" in caplog.text, "the pause")

    assert scalar(settings, "SELECT count(*) FROM orders") == 8  # executed, not committed
    await asyncio.to_thread(pause_file.unlink)
    result = await asyncio.wait_for(running, timeout=10)

    assert result.ok and result.content["rowcount"] == 3
    assert scalar(settings, "SELECT count(*) FROM orders") == 5


async def test_a_concurrent_retry_waits_for_the_first_attempt_and_replays_it(
    tool: SqlDatabase,
    settings: Settings,
    pause_file: Path,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A second worker's retry checks for a stored result before the first attempt commits.
    other = SqlDatabase(settings.demo_db_url)
    other.run("SELECT 1")
    real_stored_result = other._stored_result
    checks: list[str | None] = []

    def stale_then_real(interaction_id: str | None) -> ToolResult | None:
        checks.append(interaction_id)
        return None if len(checks) == 1 else real_stored_result(interaction_id)

    monkeypatch.setattr(other, "_stored_result", stale_then_real)
    first = asyncio.create_task(asyncio.to_thread(tool.run, DELETE_CANCELLED, "tool_6"))
    await wait_for(lambda: "pausing before commit" in caplog.text, "the first attempt's pause")
    second = asyncio.create_task(asyncio.to_thread(other.run, DELETE_CANCELLED, "tool_6"))
    await wait_for(lambda: len(checks) == 1, "the retry's check")
    await asyncio.to_thread(pause_file.unlink)
    results = await asyncio.wait_for(asyncio.gather(first, second), timeout=10)
    other.close()

    assert [r.metadata.get("replayed", False) for r in results] == [False, True]
    assert results[1].content == results[0].content
    assert scalar(settings, "SELECT count(*) FROM orders") == 5
