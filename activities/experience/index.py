"""The `index_experience` activity: one finished turn into the experience index.

Run as a local activity (`workflows/agent/experience.py`). Recording is idempotent per owner and turn,
so a retry never duplicates a memory.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from temporalio import activity

from contracts import ExperienceRecord
from contracts.names import INDEX_EXPERIENCE
from core.experience import ExperienceIndex


class ExperienceActivities:
    """Experience activities on one index."""

    def __init__(self, index: ExperienceIndex) -> None:
        self.index = index

    def activities(self) -> list[Callable[..., Any]]:
        """The bound activity methods, for `Worker(activities=...)`."""
        return [self.index_experience]

    @activity.defn(name=INDEX_EXPERIENCE)
    async def index_experience(self, record: ExperienceRecord) -> None:
        """Index the turn (who asked, which agent, how it ended, question and answer previews)."""
        await asyncio.to_thread(self.index.record, record)
