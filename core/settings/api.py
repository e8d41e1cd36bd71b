"""`settings.api`: the HTTP API: where it listens, who may call it, how long it waits."""

from __future__ import annotations

from datetime import timedelta

from pydantic import Field

from .group import Group, env


class ApiSettings(Group):
    """The HTTP API: where it listens, who may call it, how long it waits."""

    rate_limit: float | None = Field(
        default=None,
        gt=0,
        validation_alias=env("rate_limit", "SYNAPSE_RATE_LIMIT"),
        description="Requests a second each caller (API key, else client address) may make to one "
        "API process; past it, 429 with `Retry-After`. Off when unset.",
    )
    rate_burst: int = Field(
        default=100,
        ge=1,
        validation_alias=env("rate_burst", "SYNAPSE_RATE_BURST"),
        description="Requests a caller may make at once before `SYNAPSE_RATE_LIMIT` paces it.",
    )

    host: str = Field(
        default="127.0.0.1",
        validation_alias=env("host", "SYNAPSE_API_HOST"),
        description="Interface the API binds to (`synapse api`, `synapse up`); 0.0.0.0 for every one.",
    )
    port: int = Field(
        default=8000, validation_alias=env("port", "SYNAPSE_API_PORT"), description="Port the API listens on."
    )
    public_url: str | None = Field(
        default=None,
        validation_alias=env("public_url", "SYNAPSE_PUBLIC_URL"),
        description="The URL browsers reach the API at (e.g. behind a TLS proxy); an `https://` one "
        "makes every response carry `Strict-Transport-Security` (HSTS).",
    )
    keys: str | None = Field(
        default=None,
        validation_alias=env("keys", "SYNAPSE_API_KEYS"),
        description="`sha256:<hex>:principal:role` entries (from `synapse keys new`; the older "
        "`key:principal:role` still works, with a warning) separated by commas; when set, every request needs "
        "`Authorization: Bearer <key>` (roles: viewer, operator, approver, admin).",
    )
    decision_wait_seconds: float = Field(
        default=60.0,
        gt=0,
        validation_alias=env("decision_wait_seconds", "SYNAPSE_DECISION_WAIT_SECONDS"),
        description="How long `POST .../interactions/{id}` waits for the outcome (tool run included) "
        "before answering 202, and retries while Temporal is busy before answering 503.",
    )
    busy_retry_seconds: float = Field(
        default=10.0,
        gt=0,
        validation_alias=env("busy_retry_seconds", "SYNAPSE_BUSY_RETRY_SECONDS"),
        description="How long a message, pause, resume or cancel that Temporal refuses for lack of "
        "room (RESOURCE_EXHAUSTED) is retried before the API answers 503.",
    )
    approval_timeout_seconds: int = Field(
        default=300,
        gt=0,
        le=30 * 24 * 3600,
        validation_alias=env("approval_timeout_seconds", "SYNAPSE_APPROVAL_TIMEOUT_SECONDS"),
        description="How long a session's approval request waits before it counts as denied, for "
        "sessions the API starts without saying (a first message, a chat, `POST /sessions` without "
        "`approval_timeout_seconds`).",
    )
    query_wait_seconds: float = Field(
        default=10.0,
        gt=0,
        validation_alias=env("query_wait_seconds", "SYNAPSE_QUERY_WAIT_SECONDS"),
        description="How long a read (`GET /sessions/{key}`, its messages, audit, events) waits for "
        "the session's worker before answering 503 (a healthy worker answers in milliseconds).",
    )

    sync_wait_seconds: float = Field(
        default=60.0,
        gt=0,
        validation_alias=env("sync_wait_seconds", "SYNAPSE_SYNC_WAIT_SECONDS"),
        description="How long `POST /sessions/{key}/messages?wait=true` waits for the turn's answer "
        "before answering 202 with where to follow it.",
    )

    @property
    def query_wait(self) -> timedelta:
        """`query_wait_seconds` as the timeout a query takes."""
        return timedelta(seconds=self.query_wait_seconds)

    sse_keepalive_seconds: float = Field(
        default=15.0,
        gt=0,
        validation_alias=env("sse_keepalive_seconds", "SYNAPSE_SSE_KEEPALIVE_SECONDS"),
        description="An idle event stream gets a `: keepalive` comment this often (lower it behind a "
        "proxy that closes quiet connections sooner).",
    )
    sse_client_buffer: int = Field(
        default=500,
        gt=0,
        validation_alias=env("sse_client_buffer", "SYNAPSE_SSE_CLIENT_BUFFER"),
        description="Events an SSE client may fall behind before it is dropped with a `reconnect` "
        "event (it resumes with Last-Event-ID; the others never wait for it).",
    )
