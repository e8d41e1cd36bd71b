"""Experience: finished turns and task results, indexed for recall by later agents."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field

from .base import Contract

ExperienceOutcome = Literal["answer", "failure", "cancelled", "max_turns", "plan"]


class ExperienceRecord(Contract):
    """One finished turn (or task): what was asked, what came of it, who, when, which agent."""

    owner_id: str = Field(description="Workflow id of the session or task.")
    turn: int = Field(ge=0, description="Turn number within the session (0 for a task).")
    agent_id: str = Field(description="`Agent:<name>` that answered.")
    asked_by: str = Field(description="Principal who asked.")
    at: datetime = Field(description="When the turn finished (UTC).")
    outcome: ExperienceOutcome = Field(description="How the turn ended.")
    question: str = Field(description="What was asked (bounded preview).")
    answer: str = Field(description="What came of it (bounded preview).")


class ExperienceMatch(ExperienceRecord):
    """A recalled record and how well it matched."""

    score: float = Field(
        description="Relevance; higher is better (SQLite: negated FTS5 bm25; PostgreSQL: words matched). "
        "0 for a substring search (a query of words shorter than three characters)."
    )
