"""The one vocabulary of failures and system principals.

`ErrorType` values are the `ApplicationError.type` of every failure Synapse raises on purpose:
the code that raises, the retry policies (`non_retryable_error_types`) and the API's status
mapping all use these members, never strings typed again. Renaming a value changes recorded
failures and retry policies: add new members, keep old ones.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field


class ErrorType(StrEnum):
    """`ApplicationError.type` of the failures Synapse raises."""

    # Decisions and interventions, refused by a workflow's validators (the API's 4xx).
    INTERACTION_NOT_FOUND = "InteractionNotFound"
    INTERACTION_ALREADY_DECIDED = "InteractionAlreadyDecided"
    APPROVER_NOT_ALLOWED = "ApproverNotAllowed"
    ROLE_NOT_ALLOWED = "RoleNotAllowed"
    """A decision by someone whose role may not take it: below approver, or an approver widening the
    floor (a wider sandbox) that needs an admin (403)."""
    INTERACTION_RELAYED = "InteractionRelayed"
    """A session shows the request, but its graph (or the graph's task run) asked it: the decision
    goes there (the API follows it; the error's details name that workflow)."""
    ALREADY_PAUSED = "AlreadyPaused"
    """A pause of a session, graph or task run that is paused already (409)."""
    NOT_PAUSED = "NotPaused"
    """A resume of a session, graph or task run that is not paused (409)."""
    CLOSED = "Closed"
    """A command to a session, graph or task run that has closed, or is closing (409)."""
    INVALID_RESPONSE = "InvalidResponse"
    """A decision's `response_data` does not fit its interaction (422)."""
    GRANT_NOT_FOUND = "GrantNotFound"
    GRANT_ALREADY_REVOKED = "GrantAlreadyRevoked"
    NO_TURN_RUNNING = "NoTurnRunning"
    APPROVER_ALREADY_COUNTED = "ApproverAlreadyCounted"
    """The two-person rule: the same person approved already (409)."""
    # Graphs: interventions and blueprints refused by a graph's validators.
    TASK_NOT_FOUND = "TaskNotFound"
    TASK_ALREADY_PAUSED = "TaskAlreadyPaused"
    TASK_NOT_PAUSED = "TaskNotPaused"
    TASK_FINISHED = "TaskFinished"
    TASK_NEVER_RAN = "TaskNeverRan"
    VERSION_NOT_FOUND = "VersionNotFound"
    INVALID_INTERVENTION = "InvalidIntervention"
    """Fields that do not go with the intervention (a PAUSE's `new_input_data`) (422)."""
    ROLLBACK_IN_FLIGHT = "RollbackInFlight"
    """Another rollback of the graph is still waiting for its cancelled runs (409)."""
    TASK_STARTED = "TaskStarted"
    """`update_tasks` of a task that has started: roll it back instead (409)."""
    BLUEPRINT_REFUSED = "BlueprintRefused"
    # Stream watchers (see workflows/stream/watch.py).
    TOO_MANY_WATCHERS = "TooManyWatchers"
    STREAM_CLOSING = "StreamClosing"
    # Agent steps.
    UNKNOWN_AGENT = "UnknownAgent"
    INVALID_AGENT_INPUT = "InvalidAgentInput"
    MODEL_UNAVAILABLE = "ModelUnavailable"
    """Retryable: every model failed and at least one failure was transient."""
    # Chat delivery (Lark/Feishu).
    LARK_UNAVAILABLE = "LarkUnavailable"
    """Retryable: rate limits, 5xx, no answer."""
    LARK_AUTH_ERROR = "LarkAuthError"
    LARK_REJECTED = "LarkRejected"
    LARK_NOT_CONFIGURED = "LarkNotConfigured"
    # Chat delivery (DingTalk).
    DINGTALK_UNAVAILABLE = "DingTalkUnavailable"
    """Retryable: rate limits, 5xx, no answer."""
    DINGTALK_AUTH_ERROR = "DingTalkAuthError"
    DINGTALK_REJECTED = "DingTalkRejected"
    DINGTALK_NOT_CONFIGURED = "DingTalkNotConfigured"
    INVALID_OUTBOUND_MESSAGE = "InvalidOutboundMessage"
    # Webhook notifications.
    WEBHOOK_UNAVAILABLE = "WebhookUnavailable"
    """Retryable: 5xx, 408, 429, a timeout or no connection."""
    WEBHOOK_REJECTED = "WebhookRejected"
    WEBHOOK_NOT_CONFIGURED = "WebhookNotConfigured"
    WEBHOOK_REFUSED = "WebhookRefused"
    """Not retried: the URL is, or resolves to, an address outbound calls may not reach."""


class Principal(StrEnum):
    """Who decided when no person did, or when nobody said who they are."""

    TIMEOUT = "system:timeout"
    """Nobody decided before the request's deadline: a denial."""
    CANCEL = "system:cancel"
    """The session or task was cancelled while the request waited: a denial."""
    ANONYMOUS = "anonymous"
    """A caller that gave no principal (only possible with API keys off)."""
    ROLLBACK = "system:rollback"
    """A graph task was rolled back while its gate waited: the gate is withdrawn (a denial)."""
    ENDED = "system:ended"
    """Temporal ended the run (terminated, timed out, failed) while the request waited: it is
    withdrawn (a denial); a reopened graph asks again."""


class FieldError(BaseModel):
    """One invalid field of a request."""

    model_config = ConfigDict(extra="forbid")

    loc: list[str | int] = Field(description='Where: e.g. `["body", "content"]`.')
    msg: str = Field(description="What is wrong, for people.")
    type: str = Field(description="Machine-readable kind, e.g. `missing`, `string_too_short`.")


class ErrorBody(BaseModel):
    """The body of every error the HTTP API answers (4xx and 5xx)."""

    model_config = ConfigDict(extra="forbid")

    detail: str = Field(description="What went wrong and, where it helps, what to do about it.")
    errors: list[FieldError] | None = Field(default=None, description="Each invalid field (422 only).")
