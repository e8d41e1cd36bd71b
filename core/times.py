"""How a moment is written for people: `2026-11-26 10:00:00 UTC` (`contracts.times.utc_text`).

Defined once in `contracts`, where workflow code (which imports no `core`) reads it too; code
outside workflows imports it from here.
"""

from __future__ import annotations

from contracts.times import utc_text

__all__ = ["utc_text"]
