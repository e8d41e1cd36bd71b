"""Experience: finished turns and task results, indexed for recall by later agents."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any, Literal

from pydantic import Field

from .base import Contract
from .principals import PersonId

ExperienceOutcome = Literal["answer", "failure", "cancelled", "max_turns", "plan"]
PREVIEW_CHARS = 2000
"""What is kept of a question or an answer (recall shows previews, not whole documents)."""


def preview(text: str, limit: int = PREVIEW_CHARS) -> str:
    """`text`, cut to `limit` characters with a marker saying how much was left out."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text) - limit:,} more characters)"


def answer_text(answer: Any) -> str:
    """An agent's final answer as people read it: text as it is, anything else as indented JSON."""
    return answer if isinstance(answer, str) else json.dumps(answer, ensure_ascii=False, indent=2)


class ExperienceRecord(Contract):
    """One finished turn (or task): what was asked, what came of it, who, when, which agent."""

    owner_id: str = Field(description="Workflow id of the session or task.")
    turn: int = Field(ge=0, description="Turn number within the session (0 for a task).")
    agent_id: str = Field(description="`Agent:<name>` that answered.")
    asked_by: PersonId = Field(description="Principal who asked.")
    at: datetime = Field(description="When the turn finished (UTC).")
    outcome: ExperienceOutcome = Field(description="How the turn ended.")
    question: str = Field(description="What was asked (bounded preview).")
    answer: str = Field(description="What came of it (bounded preview).")
    project: str | None = Field(
        default=None, description="The project of the session it came from (None: no project named)."
    )


class ExperienceMatch(ExperienceRecord):
    """A recalled record and how well it matched."""

    score: float = Field(
        description="Relevance; higher is better (SQLite: negated FTS5 bm25; PostgreSQL, and either with "
        "SYNAPSE_CODEC_KEYS set: words matched). 0 for a substring search (a query of words shorter than "
        "three characters, without codec keys)."
    )


class TurnToRemember(Contract):
    """The turn an agent step belongs to, so the step that answers it records it in the experience
    index itself (`experience-in-last-step`) instead of the workflow's `index_experience` after."""

    turn: int = Field(ge=0, description="Turn number within the session, as the record will have it.")
    asked_by: PersonId = Field(description="Principal who asked.")
    question: str | None = Field(
        default=None,
        description="What was asked (bounded preview); None: the step's last user message, which is "
        "the turn's (the step previews it).",
    )
    project: str | None = Field(
        default=None, description="The session's project, as the record will have it."
    )
