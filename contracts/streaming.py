"""Interactive-session contracts: interactions, their outcomes and the audit (the stream's chunks and
events are in `events`)."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import Field, StrictBool

from .asks import Ask
from .base import Contract
from .messages import UniversalMessage
from .principals import PersonId
from .sandbox import SandboxProfile
from .tools import ToolResult


class TaskChunkType(StrEnum):
    """Kinds of stream chunk: session events and terminal output folded into one type."""

    PROCESSING = "processing"
    TOOL_CALL_REQUEST = "tool_call_request"
    TOOL_APPROVAL_REQUEST = "tool_approval_request"
    USER_INPUT_REQUEST = "user_input_request"
    RESPONSE = "response"
    PROGRESS = "progress"
    COMPLETE = "complete"
    ERROR = "error"
    CANCELLED = "cancelled"
    THINKING = "thinking"
    TOOL_USE = "tool_use"
    CONTENT = "content"
    PENDING = "pending"


class InteractionType(StrEnum):
    """Kinds of interaction a workflow can ask a person for."""

    TOOL_APPROVAL = "tool_approval"
    USER_INPUT = "user_input"
    CONFIRMATION = "confirmation"
    CANCELLATION = "cancellation"


def interaction_type_of(ask: Ask) -> InteractionType:
    """The seeds' `interaction_type` of a request that asks `ask` (a question is `user_input`, a
    graph task's gate a `confirmation`)."""
    return {
        "tool_approval": InteractionType.TOOL_APPROVAL,
        "question": InteractionType.USER_INPUT,
        "gate": InteractionType.CONFIRMATION,
    }[ask.kind]


class ExecutionMode(StrEnum):
    """How a task is executed."""

    SYNC = "sync"
    ASYNC_STREAM = "async_stream"
    INTERACTIVE = "interactive"


class InteractionRequest(Contract):
    """Something a person must answer: a tool approval, an input, a confirmation."""

    interaction_id: str = Field(description="Id of the interaction, unique within its workflow.")
    interaction_type: InteractionType = Field(description="What is asked.")
    workflow_id: str = Field(
        alias="task_id", description="Workflow id of the session or task asking (seed name `task_id`)."
    )
    content: str | dict[str, Any] = Field(
        description="What `ask` says, in the seeds' shape (tool approvals: `tool_name`, `tool_params`, "
        "`tool_description`, `summary`), for clients written against the seeds."
    )
    metadata: dict[str, Any] = Field(default_factory=dict, description="Extras.")
    timestamp: datetime = Field(description="When it was asked (workflow time, UTC).")
    approvers: list[PersonId] = Field(
        default_factory=list, description="Principals who may answer; empty means anyone."
    )
    requested_by: PersonId | None = Field(
        default=None, description="Principal whose message led to this request."
    )
    expires_at: datetime | None = Field(
        default=None, description="When an unanswered request is denied by `system:timeout`."
    )
    approvals_required: int = Field(
        default=1, description="Distinct approvals needed (2: the two-person rule)."
    )
    approved_by: list[PersonId] = Field(
        default_factory=list, description="Who approved so far, while more approvals are needed."
    )
    escalate_to: list[PersonId] = Field(
        default_factory=list, description="Who is asked too at `escalate_at`."
    )
    escalate_at: datetime | None = Field(default=None, description="When an undecided request escalates.")
    escalated: bool = Field(default=False, description="Whether it has escalated.")
    ask: Ask = Field(
        description="What it asks, typed (`kind`: tool_approval, question or gate): what every client "
        "reads; `content` says the same in the seeds' shape."
    )


class InteractionDecision(Contract):
    """Body of `POST /sessions/{key}/interactions/{id}` (and its graph twin): a person's answer to
    an interaction, whose `approved` may be left out when answering a question.

    The API turns it into the `Decision` the workflow takes: a question (USER_INPUT) answered
    without `approved` is approved; every other kind needs `approved` (422 without it).
    """

    interaction_id: str | None = Field(
        default=None, description="The interaction answered; may be omitted (the path names it)."
    )
    approved: StrictBool | None = Field(
        default=None,
        description="True to approve, false to deny (or decline a question). Required for tool approvals "
        "and confirmations; a question answered with `response_data.text` may leave it out.",
    )
    response_data: dict[str, Any] | None = Field(
        default=None,
        description="What the person supplied besides yes/no: `text` (the answer to a USER_INPUT "
        "question), `arguments` (approve a tool call with these arguments instead), `grant` "
        "(`session` | `session_prefix`: also allow later matching calls for the rest of the session), "
        "`sandbox` (`workspace-write` | `read-only` | `full`: where an approved terminal command runs; "
        "the request's `content.sandboxes` lists what it offers).",
    )
    user_message: str | None = Field(
        default=None, description="Comment; on a denial it is passed to the agent."
    )
    metadata: dict[str, Any] = Field(default_factory=dict, description="Channel extras.")
    principal: PersonId | None = Field(
        default=None, description="Who answers; set from the caller's credentials when auth is on."
    )
    channel: str = Field(default="http", description="Where the answer came from (HTTP sets `http`).")


class AuditKind(StrEnum):
    """What an audit entry records: the one vocabulary of the audit trail."""

    REQUESTED = "requested"
    APPROVED = "approved"
    DENIED = "denied"
    ANSWERED = "answered"
    """A question answered (USER_INPUT)."""
    DECLINED = "declined"
    """A question declined, or not answered in time."""
    REJECTED = "rejected"
    """A decision that was refused (unknown, already decided, not an allowed approver)."""
    APPROVAL_COUNTED = "approval_counted"
    """The first approval of a two-person request."""
    ESCALATED = "escalated"
    EDITED = "edited"
    GRANTED = "granted"
    ALLOWED = "allowed"
    """A call a grant allowed without asking."""
    RULE_ALLOWED = "rule_allowed"
    """A call an approval rule allowed without asking (the comment names the rule)."""
    RULE_DENIED = "rule_denied"
    """A call an approval rule refused (the comment names the rule)."""
    REVOKED = "revoked"
    PAUSED = "paused"
    RESUMED = "resumed"
    CANCELLED = "cancelled"
    TURN_CANCELLED = "turn_cancelled"
    EXTENDED = "extended"
    """A graph grew by a blueprint or a plan."""
    PLAN_REFUSED = "plan_refused"
    REOPENED = "reopened"
    PAUSE = "pause"
    """A graph task paused (an intervention)."""
    RESUME = "resume"
    ROLLBACK_AND_MODIFY = "rollback_and_modify"
    ROLLBACK_WENT_ON = "rollback_went_on"
    """A rollback went on without runs that did not end in time."""


class SessionStatus(StrEnum):
    """Where a session (or a graph task's run) is."""

    ACTIVE = "active"
    WAITING_APPROVAL = "waiting_approval"
    WAITING_INPUT = "waiting_input"
    """An agent's question waits for a person's answer."""
    PAUSED = "paused"
    CANCELLED = "cancelled"
    COMPLETED = "completed"
    FAILED = "failed"
    """It failed (a session: its workflow failed outside Synapse's code; `reason` says how)."""
    TERMINATED = "terminated"
    """Its workflow was terminated in Temporal while it ran; `reason` gives the terminate reason.
    A session's next message starts it again as a new conversation."""
    TIMED_OUT = "timed_out"
    """Its workflow ran past the execution timeout it was started with."""


class AuditEntry(Contract):
    """One recorded event of the audit trail: who did what, where and when."""

    kind: AuditKind = Field(description="What happened.")
    at: datetime = Field(description="Workflow time of the event (UTC).")
    principal: PersonId = Field(description="Who: a principal, or `system:timeout`/`system:cancel`.")
    channel: str = Field(description="Where it came from: http, ag-ui, lark, cli, system.")
    interaction_id: str | None = Field(default=None, description="The interaction concerned.")
    comment: str | None = Field(default=None, description="The person's message or the reason.")


class InteractionOutcome(Contract):
    """What came of a decision: the decision, and the tool result when the tool ran."""

    interaction_id: str = Field(description="The interaction decided.")
    approved: bool = Field(description="The decision.")
    decided_by: PersonId = Field(description="Principal who decided.")
    channel: str = Field(description="Where the decision came from.")
    decided_at: datetime = Field(description="Workflow time of the decision (UTC).")
    comment: str | None = Field(default=None, description="The person's message.")
    tool_result: ToolResult | None = Field(
        default=None, description="The tool's result when it ran after approval."
    )
    response_data: dict[str, Any] | None = Field(
        default=None,
        description="What the person supplied with the decision (answer text, edited arguments, "
        "sandbox); for a call allowed by a grant, the grant's sandbox.",
    )
    grant_id: str | None = Field(
        default=None,
        description="The grant this decision made, or (channel `grant`) the grant that allowed it.",
    )
    approvals: list[PersonId] = Field(
        default_factory=list, description="Who approved, in order (two for the two-person rule)."
    )
    complete: bool = Field(
        default=True,
        description="False: an approval counted (`approvals`), but another approver must still decide.",
    )


class DecisionAnswer(InteractionOutcome):
    """What `decide_checked` answers: the `InteractionOutcome` without what the decision it answers
    already says (`interaction_id`, `decided_by`, `channel`, each left out when it is the
    decision's). The update's result is written into the workflow's history with every approval;
    the caller holds the decision and fills them in again (`api.calls.decisions.outcome_of`). An
    answer written whole (older workers) reads the same."""

    interaction_id: str | None = Field(  # type: ignore[assignment]
        default=None, description="The interaction decided (None: the decision's)."
    )
    decided_by: PersonId | None = Field(  # type: ignore[assignment]
        default=None, description="Principal who decided (None: the decision's principal)."
    )
    channel: str | None = Field(  # type: ignore[assignment]
        default=None, description="Where the decision came from (None: the decision's)."
    )


class LiveSession(Contract):
    """The state of one interactive session, as people and UIs see it."""

    session_id: str = Field(description="The session key.")
    workflow_id: str = Field(
        alias="task_id", description="Workflow id (`session:<key>`; seed name `task_id`)."
    )
    status: SessionStatus = Field(description="Where the session is.")
    created_at: datetime = Field(description="When the session started (UTC).")
    last_activity: datetime = Field(description="Time of the last message or decision (UTC).")
    pending_interactions: list[InteractionRequest] = Field(
        default_factory=list, description="Interactions waiting for an answer."
    )
    metadata: dict[str, Any] = Field(default_factory=dict, description="Extras.")
    agent_id: str = Field(default="Agent:demo", description="The agent of this session.")
    channel: str = Field(default="http", description="Channel the session was started from.")
    approvers: list[PersonId] = Field(
        default_factory=list, description="Principals who may approve; empty means anyone."
    )
    approval_timeout_seconds: int = Field(
        default=300, description="How long an approval request waits before it is denied."
    )
    messages: list[UniversalMessage] = Field(
        default_factory=list, description="The conversation so far (of this run)."
    )
    next_offset: int = Field(default=0, description="The sequence id the session's next chunk will have.")
    project: str | None = Field(default=None, description="The project it works in (its rules apply).")
    user: PersonId | None = Field(default=None, description="The person it is for (their rules apply).")
    profile: str | None = Field(default=None, description="Its profile (`default` when None).")
    sandbox: SandboxProfile | None = Field(
        default=None,
        description="The sandbox its approved commands run in (None: the agent's or the worker's).",
    )
    reason: str | None = Field(
        default=None,
        description="How its workflow ended, when Temporal ended it while it ran (terminated, timed "
        "out, failed outside Synapse's code); what it asked then is withdrawn.",
    )
