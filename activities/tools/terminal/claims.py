"""Exactly-once terminal commands: an approved command runs at most once per claim.

A claim is taken (`started`) before the command is sent and completed with its result after; a
retried activity that finds the result answers with it, and one that finds only `started` (the
worker died mid-command) answers "interrupted" instead of running the command again. Kept in
`<data_dir>/terminal.db`, shared by the worker's threads and processes.
"""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

from contracts import ToolResult
from core.sqlite import SqliteFile

SCHEMA = (
    "CREATE TABLE IF NOT EXISTS terminal_runs (claim TEXT PRIMARY KEY, command TEXT NOT NULL, "
    "started_at TEXT NOT NULL, result_json TEXT)",
)


class CommandClaims:
    """Claims of approved commands."""

    def __init__(self, path: Path) -> None:
        """Keep them in the SQLite file at `path`."""
        self._db = SqliteFile(path, SCHEMA)

    def take(self, claim: str, command: str) -> ToolResult | None:
        """Claim a run; None when it is ours to run, else what an earlier attempt left."""
        with self._db.connect() as db:
            try:
                db.execute(
                    "INSERT INTO terminal_runs (claim, command, started_at) VALUES (?, ?, ?)",
                    (claim, command, datetime.now(UTC).isoformat()),
                )
                return None
            except sqlite3.IntegrityError:
                row = db.execute("SELECT result_json FROM terminal_runs WHERE claim = ?", (claim,)).fetchone()
        if row and row[0]:
            return ToolResult.model_validate_json(row[0])
        return ToolResult(
            tool_id="terminal",
            ok=False,
            error="an earlier attempt of this approved command was interrupted (its worker stopped); "
            "it is not run twice: check its effects, then ask again",
            metadata={"command": command, "exactly_once": True},
        )

    def complete(self, claim: str, result: ToolResult) -> None:
        """Record the run's result for retries."""
        with self._db.connect() as db:
            db.execute(
                "UPDATE terminal_runs SET result_json = ? WHERE claim = ?",
                (json.dumps(result.model_dump(mode="json")), claim),
            )
