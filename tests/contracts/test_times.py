"""`utc_text`: the one way a moment is written for people, whatever zone it comes in."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

from contracts.times import utc_text
from core import times


def test_a_moment_is_written_in_utc_to_the_second() -> None:
    assert utc_text(datetime(2026, 11, 26, 10, 0, 5, 999, tzinfo=UTC)) == "2026-11-26 10:00:05 UTC"


def test_a_moment_in_another_zone_is_turned_into_utc() -> None:
    beijing = timezone(timedelta(hours=8))
    assert utc_text(datetime(2026, 11, 27, 1, 30, tzinfo=beijing)) == "2026-11-26 17:30:00 UTC"


def test_a_naive_moment_is_taken_as_utc_already() -> None:
    assert utc_text(datetime(2026, 11, 26, 10, 0)) == "2026-11-26 10:00:00 UTC"


def test_without_seconds_it_stops_at_the_minute() -> None:
    assert utc_text(datetime(2026, 11, 26, 10, 0, 59, tzinfo=UTC), seconds=False) == "2026-11-26 10:00 UTC"


def test_core_reads_the_same_formatter() -> None:
    """One implementation: workflow code imports it from contracts, the rest through core."""
    assert times.utc_text is utc_text
