"""The one state model of a session workflow, carried whole across continue-as-new.

Adding a field (with a default) is safe for running workflows; renaming or removing one
breaks the continue-as-new input of runs already in flight.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from temporalio.contrib.workflow_streams import WorkflowStreamState

from contracts import (
    ArchiveCursor,
    AuditEntry,
    Grant,
    InboundMessage,
    InteractionOutcome,
    InteractionRequest,
    Notification,
    OutboundMessage,
    SessionConfig,
    UniversalMessage,
)

SEEN_MESSAGE_IDS_KEPT = 500
"""Channel message ids remembered for de-duplication (redelivered events)."""


class SessionState(BaseModel):
    """Everything a session knows; the workflow's only mutable state."""

    model_config = ConfigDict(extra="forbid")

    created_at: datetime
    last_activity: datetime
    status: str = "active"
    paused: bool = False
    cancelled: bool = False
    cancel_reason: str | None = None
    messages: list[UniversalMessage] = Field(default_factory=list)
    inbox: list[InboundMessage] = Field(default_factory=list)
    pending: list[InteractionRequest] = Field(default_factory=list)
    decided: dict[str, InteractionOutcome] = Field(default_factory=dict)
    audit: list[AuditEntry] = Field(default_factory=list)
    seen_message_ids: list[str] = Field(default_factory=list)
    outbox: list[OutboundMessage] = Field(default_factory=list)
    cards: dict[str, str] = Field(default_factory=dict)
    next_interaction: int = 1
    grants: list[Grant] = Field(default_factory=list)
    notifications: list[Notification] = Field(default_factory=list)
    """Webhook notifications not sent yet (see `notifier`)."""
    notifications_sent: int = 0
    next_sequence: int = 0
    turns_this_run: int = 0
    turns_total: int = 0
    message_archive: ArchiveCursor = Field(default_factory=ArchiveCursor)
    audit_archive: ArchiveCursor = Field(default_factory=ArchiveCursor)
    stream_archive: ArchiveCursor = Field(default_factory=ArchiveCursor)
    graph: str | None = None
    """Workflow id of the graph the current turn runs (its agent proposed a plan)."""
    relayed: list[InteractionRequest] = Field(default_factory=list)
    """Gates and tool approvals of that graph waiting for a person (shown here, decided there)."""
    worker_queues: dict[str, str] = Field(default_factory=dict)
    """Per worker-bound tool (the terminal), the task queue of the worker holding its state."""
    tool_states: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """Per worker-bound tool, the metadata of its last result: where it left its state (the
    terminal's `cwd`, a program `waiting_for_input`), for the next call's assessment."""


class SessionRunInput(BaseModel):
    """Input of `SessionWorkflow.run`: the config, plus carried state after continue-as-new."""

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    config: SessionConfig
    state: SessionState | None = None
    stream: WorkflowStreamState | None = None
    turns_before_continue_as_new: int = Field(
        default=500,
        gt=0,
        description="Continue-as-new after this many turns even if the server has not "
        "suggested it yet (tests lower it to exercise the hand-over).",
    )
