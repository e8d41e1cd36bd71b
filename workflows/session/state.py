"""The one state model of a session workflow, carried whole across continue-as-new.

Adding a field (with a default) is safe for running workflows; renaming or removing one
breaks the continue-as-new input of runs already in flight.
"""

from __future__ import annotations

from datetime import datetime

from pydantic import ConfigDict, Field
from temporalio.contrib.workflow_streams import WorkflowStreamState

from contracts import (
    ArchiveCursor,
    InboundMessage,
    InteractionRequest,
    Notification,
    OutboundMessage,
    SessionConfig,
    UniversalMessage,
)
from contracts.base import CompactContract

from ..agent.state import AgentRunState

SEEN_MESSAGE_IDS_KEPT = 500
"""Channel message ids remembered for de-duplication (redelivered events)."""


class SessionState(AgentRunState):
    """Everything a session knows; the workflow's only mutable state."""

    model_config = ConfigDict(extra="forbid")

    created_at: datetime
    messages: list[UniversalMessage] = Field(default_factory=list)
    inbox: list[InboundMessage] = Field(default_factory=list)
    seen_message_ids: list[str] = Field(default_factory=list)
    outbox: list[OutboundMessage] = Field(default_factory=list)
    cards: dict[str, str] = Field(default_factory=dict)
    notifications: list[Notification] = Field(default_factory=list)
    """Webhook notifications not sent yet (see `notifier`)."""
    notifications_sent: int = 0
    turns_this_run: int = 0
    turns_total: int = 0
    message_archive: ArchiveCursor = Field(default_factory=ArchiveCursor)
    audit_archive: ArchiveCursor = Field(default_factory=ArchiveCursor)
    stream_archive: ArchiveCursor = Field(default_factory=ArchiveCursor)
    graph: str | None = None
    """Workflow id of the graph the current turn runs (its agent proposed a plan)."""
    relayed: list[InteractionRequest] = Field(default_factory=list)
    """Gates and tool approvals of that graph waiting for a person (shown here, decided there)."""


HISTORY_EVENTS_KEPT = 200
"""A session's run continues as new at the first turn's end past this many events (about eight
turns of a tool call and its approval, 23 events each): an evicted session replays at most that."""


class SessionRunInput(CompactContract):
    """Input of `SessionWorkflow.run`: the config, plus carried state after continue-as-new
    (compact: its defaults are not written)."""

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
    history_events_before_continue_as_new: int | None = Field(
        default=None,
        gt=0,
        description="Continue-as-new at the end of a turn once the run's history has this many "
        "events, so a session a worker evicted from its cache replays its last turns, not all of "
        "them (Synapse's starters: `HISTORY_EVENTS_KEPT`). None: runs started before it, which go "
        "by turns and the server's suggestion only.",
    )
    generation: int | None = Field(
        default=None,
        description="The code generation the run takes (`workflows.versioning`; 1 is 1.0); set by "
        "Synapse's starters. None: decided by a marker per change when the run starts.",
    )
