"""The `sql` plugin: one SQL statement per call; SELECT runs freely, anything that changes data asks.

sqlglot classifies the statement (`syntax`); the statement runs in the database with its
exactly-once claim (`database`); a result reads as a sentence (`report`).
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any, Self

from contracts import ArtifactRef, ToolCallRequest, ToolDescriptor, ToolResult, ToolRun
from core.rules.match import CallFacts
from core.settings import Settings

from ..plugin import Tool, claim_key, one_line
from .database import TOOL_ID, SqlDatabase
from .sentences import describe_sql_result, sql_preview, sql_said

DESCRIPTOR = ToolDescriptor(
    name=TOOL_ID,
    description=(
        "Run one SQL statement against the demo database (SQLite by default, with an `orders` "
        "table: id, customer, amount, status). SELECT runs freely; INSERT, UPDATE, DELETE and "
        "schema changes need a person's approval."
    ),
    arguments_schema={
        "type": "object",
        "properties": {"sql": {"type": "string", "description": "One SQL statement."}},
        "required": ["sql"],
    },
    permissions=["read", "write"],
    source="builtin",
    # One statement on a local database takes ~2 ms: `quick` makes the workflow run it as a
    # local activity, which saves the activity task round trip on the approval path.
    capabilities=["quick"],
    approval="destructive",
)


def sql_argument(arguments: dict[str, Any]) -> str | None:
    """The `sql` argument when it is a non-empty string, else None."""
    sql = arguments.get("sql")
    return sql if isinstance(sql, str) and sql.strip() else None


def bad_sql_argument(arguments: dict[str, Any]) -> str:
    """Why the arguments hold no statement to run."""
    got = f"got {arguments['sql']!r}" if "sql" in arguments else "it is missing"
    return f"argument 'sql' must be a non-empty string holding one SQL statement; {got}"


class SqlTool(Tool):
    """The `sql` tool on its database (created on first use)."""

    DESCRIPTOR = DESCRIPTOR

    def __init__(
        self, url: str, max_rows: int = 100, *, seed_demo: bool = True, read_timeout_seconds: float = 10.0
    ) -> None:
        super().__init__()
        self.database = SqlDatabase(
            url, max_rows=max_rows, seed_demo=seed_demo, read_timeout_seconds=read_timeout_seconds
        )

    @classmethod
    def from_settings(cls, settings: Settings) -> Self:
        """`SYNAPSE_SQL_URL` (the seeded demo SQLite database when unset), `SYNAPSE_SQL_MAX_ROWS`,
        `SYNAPSE_SQL_READ_TIMEOUT_SECONDS`."""
        return cls(
            settings.demo_db_url,
            max_rows=settings.tools.sql_max_rows,
            seed_demo=settings.tools.sql_url is None,
            read_timeout_seconds=settings.tools.sql_read_timeout_seconds,
        )

    def prepare(self) -> None:
        """Create the claims table, and the seeded demo `orders` in the demo database, when absent."""
        self.database.prepare()

    async def close(self) -> None:
        """Release the engine's connections."""
        self.database.close()

    def assess(self, call: ToolCallRequest, state: dict[str, Any]) -> tuple[bool, str]:
        """Anything not provably read-only needs approval (sqlglot, in the database's dialect)."""
        sql = sql_argument(call.arguments)
        if sql is None:
            return True, bad_sql_argument(call.arguments)
        classification = self.database.classify(sql)
        return classification.destructive, classification.reason

    def rule_facts(self, call: ToolCallRequest, needs_approval: bool) -> CallFacts:
        """The statement's kind and table too (none for several statements or an unparseable one)."""
        facts = super().rule_facts(call, needs_approval)
        sql = sql_argument(call.arguments)
        classification = self.database.classify(sql) if sql is not None else None
        if classification is None or classification.kind in ("UNKNOWN", "MULTIPLE"):
            return facts
        return replace(facts, sql_kind=classification.kind, sql_table=classification.table)

    def head(self, call: ToolCallRequest) -> str | None:
        """`DELETE orders`: the statement kind and its table (None: unparseable or several)."""
        sql = sql_argument(call.arguments)
        if sql is None:
            return None
        classification = self.database.classify(sql)
        if classification.kind in ("UNKNOWN", "MULTIPLE"):
            return None
        return " ".join(part for part in (classification.kind, classification.table) if part)

    def summarize(self, call: ToolCallRequest) -> str:
        """`sql: DELETE FROM orders WHERE status = 'cancelled'`."""
        sql = call.arguments.get("sql")
        return one_line(f"sql: {sql}") if isinstance(sql, str) else super().summarize(call)

    async def run(self, run: ToolRun) -> ToolResult:
        """Run the statement (in a thread); a destructive one is applied once per `claim_key(run)`."""
        sql = sql_argument(run.call.arguments)
        if sql is None:
            return ToolResult(tool_id=TOOL_ID, ok=False, error=bad_sql_argument(run.call.arguments))
        return await asyncio.to_thread(self.database.run, sql, claim_key(run))

    @classmethod
    def preview(cls, content: Any, budget: int, ref: ArtifactRef) -> Any:
        """The first rows that fit (cells cut), with a note naming the artifact that holds them all."""
        if isinstance(content, dict) and content.get("rows"):
            return sql_preview(content, budget, ref)
        return super().preview(content, budget, ref)

    @classmethod
    def describe(cls, content: Any) -> str | None:
        """`DELETE done: 3 rows affected.` or `SELECT returned 2 rows: ...`."""
        return describe_sql_result(content) if isinstance(content, dict) else None

    @classmethod
    def said(cls, content: Any) -> str | None:
        """`3 rows` selected, or `1 row affected`."""
        return sql_said(content) if isinstance(content, dict) else None
