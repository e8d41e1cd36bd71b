"""The part of a workflow's state that supervision reads and writes, as one base model.

A session, a graph and a graph task's run each extend `SupervisedState` with their own fields;
one that runs tools itself extends `agent.state.AgentRunState`, which adds where its
worker-bound tools keep their state. Carried whole across continue-as-new: adding a field with a
default is safe for running workflows; renaming or removing one breaks their carried state.
"""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field

from contracts import AuditEntry, Grant, InteractionOutcome, InteractionRequest


class SupervisedState(BaseModel):
    """Pending requests, decisions, grants and the audit trail, and whether the run may go on."""

    model_config = ConfigDict(extra="forbid")

    last_activity: datetime
    status: str = "active"
    paused: bool = False
    cancelled: bool = False
    cancel_reason: str | None = None
    pending: list[InteractionRequest] = Field(default_factory=list)
    decided: dict[str, InteractionOutcome] = Field(default_factory=dict)
    audit: list[AuditEntry] = Field(default_factory=list)
    next_interaction: int = 1
    grants: list[Grant] = Field(default_factory=list)
    next_sequence: int = 0
    """The next chunk's sequence id on the run's stream (it goes on across continue-as-new)."""
