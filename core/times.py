"""How a moment is written for people: `2026-11-26 10:00:00 UTC`.

Every refusal, chat card, click answer, recalled turn and REPL table outside workflow code says a
time this way. Workflow code imports no `core` (tests/workflows/test_imports.py) and keeps its own.
"""

from __future__ import annotations

from datetime import UTC, datetime


def utc_text(moment: datetime, *, seconds: bool = True) -> str:
    """`2026-11-26 10:00:00 UTC` (`2026-11-26 10:00 UTC` without `seconds`): the moment in UTC, a
    naive one taken as UTC already."""
    aware = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    return aware.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC" if seconds else "%Y-%m-%d %H:%M UTC")
