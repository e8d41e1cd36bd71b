"""How a moment is written for people: `2026-11-26 10:00:00 UTC`.

The one formatter of a time in words, for workflow code (which imports `contracts`, never `core`)
and everything else alike (`core.times` re-exports it): refusals, chat cards, click answers, the
Web UI's details, recalled turns, REPL tables. Pure: no clock, no zone but UTC. Machine fields
keep ISO 8601 (`isoformat()`).
"""

from __future__ import annotations

from datetime import UTC, datetime


def utc_text(moment: datetime, *, seconds: bool = True) -> str:
    """`2026-11-26 10:00:00 UTC` (`2026-11-26 10:00 UTC` without `seconds`): the moment in UTC, a
    naive one taken as UTC already."""
    aware = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    return aware.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC" if seconds else "%Y-%m-%d %H:%M UTC")
