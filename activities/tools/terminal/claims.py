"""Exactly-once terminal commands: an approved command runs at most once per claim.

A claim is taken (`started`) before the command is sent and completed with its result after; a
retried activity that finds the result answers with it, and one that finds only `started` (the
worker died mid-command) answers "interrupted" instead of running the command again. Kept in
`<data_dir>/terminal.db`, shared by the worker's threads and processes. With `SYNAPSE_CODEC_KEYS`
set, a claim's command and result are stored sealed (`core.at_rest`), bound to the claim.
"""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

from contracts import ToolResult
from core.at_rest import Sealer
from core.sqlite import SqliteFile

SCHEMA = (
    "CREATE TABLE IF NOT EXISTS terminal_runs (claim TEXT PRIMARY KEY, command TEXT NOT NULL, "
    "started_at TEXT NOT NULL, result_json TEXT)",
)


class CommandClaims:
    """Claims of approved commands."""

    def __init__(self, path: Path, sealer: Sealer | None = None) -> None:
        """Keep them in the SQLite file at `path`, sealed by `sealer` (in clear by default)."""
        self._db = SqliteFile(path, SCHEMA)
        self._sealer = sealer or Sealer()

    def take(self, claim: str, command: str) -> ToolResult | None:
        """Claim a run; None when it is ours to run, else what an earlier attempt left."""
        with self._db.connect() as db:
            try:
                db.execute(
                    "INSERT INTO terminal_runs (claim, command, started_at) VALUES (?, ?, ?)",
                    (
                        claim,
                        self._sealer.seal_text(command, _where(claim, "command")),
                        datetime.now(UTC).isoformat(),
                    ),
                )
                return None
            except sqlite3.IntegrityError:
                row = db.execute("SELECT result_json FROM terminal_runs WHERE claim = ?", (claim,)).fetchone()
        if row and row[0]:
            return ToolResult.model_validate_json(
                self._sealer.open_text(row[0], _where(claim, "result_json"))
            )
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
                (
                    self._sealer.seal_text(
                        json.dumps(result.model_dump(mode="json")), _where(claim, "result_json")
                    ),
                    claim,
                ),
            )


def _where(claim: str, column: str) -> str:
    """Where a claim's sealed command or result belongs (authenticated with it)."""
    return f"terminal_runs.{column}:{claim}"
