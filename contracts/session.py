"""Session configuration and the HTTP request bodies for sessions."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import Field, StrictInt

from .agents import AgentRef, AgentSpec
from .artifacts import ARTIFACT_ID_PATTERN
from .base import CompactContract, Contract
from .policy import DecisionPolicy
from .principals import PersonId
from .sandbox import SandboxProfile
from .streaming import AuditEntry, InteractionRequest

SESSION_KEY_PATTERN = r"^[A-Za-z0-9_.:@-]{1,200}$"
NOTIFY_URL_PATTERN = r"^https?://[^\s]{1,2000}$"
AGENT_ID_PATTERN = r"^(Agent|Group):.+$"
MAX_WAIT_SECONDS = 30 * 24 * 3600
"""Longest a session's approval or question may wait: 30 days."""


class SessionChoices(Contract):
    """What a session is started with and keeps as given, defined once for `POST /sessions`
    (`CreateSessionRequest`) and the session's fixed `SessionConfig` (None: not chosen).

    The fields the two share otherwise (key, agent, approvers, timeouts, policies) differ in their
    defaults: the request's None is "the default", which the session's config then holds."""

    notify_url: str | None = Field(
        default=None,
        pattern=NOTIFY_URL_PATTERN,
        description="An http(s) URL told of every interaction opened, decided, escalated or timed out, "
        "signed with SYNAPSE_WEBHOOK_SECRET (see `Notification`).",
    )
    sandbox: SandboxProfile | None = Field(
        default=None,
        description="The sandbox approved terminal commands run in: `workspace-write`, `read-only` or "
        "`full`; over the agent's choice and the worker's SYNAPSE_TERMINAL_SANDBOX. An approver may "
        "still choose another for one call (`response_data.sandbox`).",
    )
    project: str | None = Field(
        default=None,
        max_length=1000,
        description="The project the session works in: approval rules of scope `project` for it apply.",
    )
    user: PersonId | None = Field(
        default=None,
        max_length=200,
        description="The person the session is for: their rules (scope `user`) apply; the caller by default.",
    )
    profile: str | None = Field(
        default=None,
        description="A named set of rules and settings: `default`, `restricted` (every write denied, "
        "commands read-only) or `enterprise` (every call asked for).",
    )


class SessionConfig(SessionChoices, CompactContract):
    """How a session runs; fixed when it starts, carried across continue-as-new."""

    session_key: str = Field(pattern=SESSION_KEY_PATTERN, description="Business key of the session.")
    agent_id: str = Field(default="Agent:demo", pattern=AGENT_ID_PATTERN, description="The agent to talk to.")
    agent: AgentSpec | None = Field(
        default=None,
        description="The agent declaration `agent_id` resolved to when the session started, by "
        "value (sessions started before `agent_ref`; None in histories from before declarations).",
    )
    agent_ref: AgentRef | None = Field(
        default=None,
        description="The agent declaration `agent_id` resolved to when the session started, by "
        "reference (set by the API): the workers' registry holds the declaration itself.",
    )
    approvers: list[PersonId] = Field(
        default_factory=list, description="Principals who may approve; empty means anyone."
    )
    approval_timeout_seconds: int = Field(
        default=300, gt=0, le=MAX_WAIT_SECONDS, description="Approval wait before a denial."
    )
    question_timeout_seconds: int = Field(
        default=3600,
        gt=0,
        le=MAX_WAIT_SECONDS,
        description="How long an agent's question (`ask_user`) waits for an answer before the agent "
        "is told nobody answered.",
    )
    channel: str = Field(default="http", description="Channel the session belongs to.")
    chat_id: str | None = Field(
        default=None, description="The channel's chat (Lark `chat_id`) answers and cards go to."
    )
    approve_by_requester: bool = Field(
        default=False,
        description="The person whose message led to a request may approve it, besides `approvers` "
        "(Lark sessions: on).",
    )
    policies: dict[str, DecisionPolicy] = Field(
        default_factory=dict,
        description="Decision policies by tool name (or `*`), over the agent's: who decides, two-person "
        "rule, escalation, grants.",
    )
    max_turns: int = Field(default=10, gt=0, le=100, description="Agent steps allowed for one user message.")
    idle_timeout_seconds: int = Field(
        default=7 * 24 * 3600, gt=0, description="The session completes after this long idle."
    )
    inline_input_bytes: int | None = Field(
        default=None,
        gt=0,
        description="Passed to the graphs its agent proposes (`GraphConfig.inline_input_bytes`).",
    )


class CreateSessionRequest(SessionChoices):
    """Body of `POST /sessions`."""

    session_key: str | None = Field(
        default=None, pattern=SESSION_KEY_PATTERN, description="Key; generated when omitted."
    )
    agent_id: str | None = Field(
        default=None, pattern=AGENT_ID_PATTERN, description="Agent; `Agent:demo` by default."
    )
    approvers: list[PersonId] | None = Field(
        default=None, description="Principals who may approve; anyone when omitted."
    )
    approval_timeout_seconds: StrictInt | None = Field(
        default=None,
        gt=0,
        le=MAX_WAIT_SECONDS,
        description="Approval timeout; SYNAPSE_APPROVAL_TIMEOUT_SECONDS (300 s) by default.",
    )
    question_timeout_seconds: StrictInt | None = Field(
        default=None, gt=0, le=MAX_WAIT_SECONDS, description="Question timeout; 3600 s by default."
    )
    policies: dict[str, DecisionPolicy] | None = Field(
        default=None, description="Decision policies by tool name or `*` (see `DecisionPolicy`)."
    )


class MessageRequest(Contract):
    """Body of `POST /sessions/{key}/messages`."""

    content: str = Field(
        min_length=1, description="What to say to the agent (at most SYNAPSE_MAX_MESSAGE_BYTES, 64 KiB)."
    )
    principal: PersonId | None = Field(
        default=None, description="Who says it (ignored when the API key names the caller)."
    )
    artifacts: list[Annotated[str, Field(pattern=ARTIFACT_ID_PATTERN)]] = Field(
        default_factory=list,
        max_length=10,
        description="Artifacts attached to the message (ids from `POST /artifacts`); the agent sees "
        "each one summarised.",
    )


class SessionControl(Contract):
    """Body of `POST /sessions/{key}/pause|resume|cancel` (all fields optional)."""

    reason: str | None = Field(default=None, description="Why; recorded in the audit trail.")
    principal: PersonId | None = Field(
        default=None, description="Who (ignored when the API key names the caller)."
    )


TurnStatus = Literal["accepted", "completed", "failed", "cancelled", "waiting", "running"]


class MessageAccepted(Contract):
    """Answer of `POST /sessions/{key}/messages`: the message is on its way (INTERACTIVE, 202), or
    with `?wait=true` (SYNC) how its turn went: its answer (200), or what it waits for (202)."""

    session_key: str = Field(description="The session the message went to.")
    workflow_id: str = Field(description="Its workflow id, to look up in the Web UI.")
    message_id: str | None = Field(
        default=None, description="The message's id: its turn's `processing` chunk carries it in `metadata`."
    )
    status: TurnStatus = Field(
        default="accepted",
        description="accepted (not waited for); completed / failed / cancelled: the turn ended; "
        "waiting: it needs a person (`pending`); running: still going after SYNAPSE_SYNC_WAIT_SECONDS.",
    )
    answer: Any = Field(default=None, description="The turn's answer (completed) or error (failed).")
    pending: InteractionRequest | None = Field(
        default=None,
        description="What the turn waits for (status waiting): decide it, then follow the events.",
    )
    next_offset: int | None = Field(
        default=None, description="Follow the rest with `GET /sessions/{key}/events?after=<next_offset - 1>`."
    )


class SessionMessageAccepted(MessageAccepted):
    """Answer of `POST /sessions/{key}/messages`: `MessageAccepted`, and whether the message
    started the session again after its last run had ended."""

    restarted: bool = Field(
        default=False,
        description="True when the session's last run had ended (completed after being idle, failed or "
        "terminated) and this message started a new run of it: a new conversation, `note` says why. A "
        "cancelled session is never restarted by a message (409).",
    )
    note: str | None = Field(default=None, description="How the earlier run ended, when `restarted`.")


class AuditTrail(Contract):
    """Every recorded decision and intervention of a session, oldest first."""

    workflow_id: str = Field(description="The session's workflow id.")
    entries: list[AuditEntry] = Field(default_factory=list, description="The events.")


class SessionSummary(Contract):
    """One session in `GET /sessions`: what a list shows (from Temporal's visibility)."""

    session_key: str = Field(description="The session key.")
    workflow_id: str = Field(description="`session:<key>`.")
    status: str = Field(description="Where it is (`waiting`, `active`, `completed`, ...).")
    pending: int = Field(default=0, description="Requests waiting for a person.")
    channel: str | None = Field(default=None, description="Where it was started from.")
    agent_id: str | None = Field(default=None, description="Its agent.")
    started_at: datetime | None = Field(default=None, description="When it started (UTC).")
    closed: bool = Field(
        default=False,
        description="Its workflow has ended (completed, cancelled, failed, terminated, timed out).",
    )
    reason: str | None = Field(
        default=None,
        description="How its workflow ended, when Temporal ended it while it ran (terminated, "
        "timed out, failed outside Synapse's code).",
    )
