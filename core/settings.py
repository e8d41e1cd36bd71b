"""The one settings object: read in entry points (worker, API, CLI) and passed down.

Grouped by concern: `settings.temporal`, `settings.api`, `settings.tools`, `settings.lark`,
`settings.dingtalk`, plus the data directory and the agents file. Every field is read from its own environment variable
(named in its `validation_alias`: `SYNAPSE_API_PORT`, `LARK_APP_ID`, ...) or a `.env` file, so
the variables stay flat while the code reads `settings.api.port`.

Workflows never read settings; what changes their behaviour reaches them as input.
"""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path
from typing import Any, Literal
from urllib.parse import quote

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, field_validator
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict
from pydantic_settings.sources import EnvSettingsSource

from contracts import SandboxProfile
from contracts.names import GRAPH_PREFIX, SESSION_PREFIX

from .codec import EncryptionCodec, parse_keys
from .outbound import OutboundPolicy


def env(name: str, *more: str) -> AliasChoices:
    """The variables a field is read from (the first set wins); its own name works in code."""
    return AliasChoices(name, *more)


class _Group(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True, frozen=True)


SDK_POLLERS = 5
"""The SDK's default number of long polls a worker keeps open per kind of task."""


class TemporalSettings(_Group):
    """Where Synapse meets Temporal (the server address itself comes from `temporalio.envconfig`)."""

    port: int = Field(
        default=7233,
        validation_alias=env("port", "SYNAPSE_TEMPORAL_PORT"),
        description="gRPC port of the embedded dev server.",
    )
    ui_port: int = Field(
        default=8233,
        validation_alias=env("ui_port", "SYNAPSE_UI_PORT"),
        description="Port of the embedded Web UI.",
    )
    task_queue: str = Field(
        default="synapse",
        validation_alias=env("task_queue", "SYNAPSE_TASK_QUEUE"),
        description="Task queue of workers and clients.",
    )
    workflow_slots: int | None = Field(
        default=None,
        gt=0,
        validation_alias=env("workflow_slots", "SYNAPSE_WORKFLOW_SLOTS"),
        description="Workflow tasks a worker runs at once; 8 per CPU when unset. Workflow code "
        "shares one interpreter lock, so more only slows each one (an activation past 30 s "
        "counts as deadlocked).",
    )
    cached_workflows: int | None = Field(
        default=None,
        ge=0,
        validation_alias=env("cached_workflows", "SYNAPSE_CACHED_WORKFLOWS"),
        description="Workflows a worker keeps in memory between their tasks (its sticky cache); "
        "the SDK's 1,000 when unset. Fewer save memory; an evicted workflow is replayed from its "
        "history at its next task (0: at every task).",
    )
    activity_slots: int | None = Field(
        default=None,
        gt=0,
        validation_alias=env("activity_slots", "SYNAPSE_ACTIVITY_SLOTS"),
        description="Activities (agent steps, tool runs, deliveries) a worker runs at once; the SDK's "
        "100 when unset. Agent steps mostly wait for a model, so more helps until the model's rate limit.",
    )
    workflow_pollers: int | None = Field(
        default=None,
        gt=0,
        validation_alias=env("workflow_pollers", "SYNAPSE_WORKFLOW_POLLERS"),
        description="Long polls a worker keeps open for workflow tasks; the SDK's 5 when unset.",
    )
    activity_pollers: int | None = Field(
        default=None,
        gt=0,
        validation_alias=env("activity_pollers", "SYNAPSE_ACTIVITY_POLLERS"),
        description="Long polls a worker keeps open for activity tasks; the SDK's 5 when unset.",
    )
    sticky_seconds: float = Field(
        default=10.0,
        gt=0,
        validation_alias=env("sticky_seconds", "SYNAPSE_STICKY_SECONDS"),
        description="Seconds a workflow's next task waits for the worker that holds it in memory "
        "(its sticky queue) before any worker may take it (`sticky_queue_schedule_to_start_timeout`, "
        "the SDK's 10 s). Shorter bounds a read's wait on a busy worker, but a task moved off its "
        "sticky queue is replayed from its whole history: on a loaded machine 3 s made reads slower.",
    )
    workflow_sandbox: bool = Field(
        default=True,
        validation_alias=env("workflow_sandbox", "SYNAPSE_WORKFLOW_SANDBOX"),
        description="Run workflow code in the SDK's sandbox, which refuses non-deterministic calls "
        "(I/O, the clock, random) at run time. Off (false) a worker spends less CPU per workflow "
        "task (docs/production.md has the measured effect); the test and replay suites run "
        "sandboxed either way. Keep it on unless workers are CPU-bound.",
    )
    worker_metrics_address: str | None = Field(
        default=None,
        validation_alias=env("worker_metrics_address", "SYNAPSE_WORKER_METRICS_ADDRESS"),
        pattern=r"^[^\s:]+:\d{1,5}$",
        description="`host:port` where a worker serves Prometheus metrics at `/metrics`: the SDK's "
        "`temporal_*` and Synapse's (requests opened and decided, approval wait, tool runs). Off when unset.",
    )
    codec_keys: str | None = Field(
        default=None,
        validation_alias=env("codec_keys", "SYNAPSE_CODEC_KEYS"),
        description="`kid:base64key` entries separated by commas: every payload stored in Temporal, "
        "and what Synapse's own stores keep (artifacts, rules, terminal records, experience), is "
        "encrypted (AES-GCM) with the first, any of them decrypts (see core/codec.py, core/at_rest.py). "
        "Off when unset.",
        repr=False,
    )

    codec_origins: str | None = Field(
        default=None,
        validation_alias=env("codec_origins", "SYNAPSE_CODEC_ORIGINS"),
        description="Comma-separated origins of the Web UIs that may call the codec server from the "
        "browser; the embedded UI's (`http://127.0.0.1:<ui port>`, `http://localhost:<ui port>`) when unset.",
    )

    @property
    def ui_origins(self) -> list[str]:
        """The origins the codec server answers browsers from."""
        if self.codec_origins:
            return [origin.strip().rstrip("/") for origin in self.codec_origins.split(",") if origin.strip()]
        return [f"http://127.0.0.1:{self.ui_port}", f"http://localhost:{self.ui_port}"]

    @field_validator("codec_keys")
    @classmethod
    def _readable_keys(cls, value: str | None) -> str | None:
        if value is not None:
            parse_keys(value)  # raises with the entry and the reason
        return value

    def codec(self) -> EncryptionCodec | None:
        """The payload codec of these keys (None when encryption is off)."""
        return EncryptionCodec(parse_keys(self.codec_keys)) if self.codec_keys else None

    @property
    def worker_cached_workflows(self) -> int:
        """`cached_workflows`, or the SDK's default of 1,000."""
        return 1000 if self.cached_workflows is None else self.cached_workflows

    @property
    def worker_workflow_pollers(self) -> int:
        """`workflow_pollers`, or the SDK's default of 5."""
        return self.workflow_pollers or SDK_POLLERS

    @property
    def worker_activity_pollers(self) -> int:
        """`activity_pollers`, or the SDK's default of 5."""
        return self.activity_pollers or SDK_POLLERS

    @property
    def worker_workflow_slots(self) -> int:
        """`workflow_slots`, or 8 per CPU of this machine."""
        return self.workflow_slots or 8 * (os.cpu_count() or 1)


class ApiSettings(_Group):
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
        description="Interface it binds to.",
    )
    port: int = Field(default=8000, validation_alias=env("port", "SYNAPSE_API_PORT"), description="Its port.")
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


class ToolSettings(_Group):
    """The builtin tools."""

    sql_url: str | None = Field(
        default=None,
        validation_alias=env("sql_url", "SYNAPSE_SQL_URL"),
        description="SQLAlchemy URL of the `sql` tool's database (SQLite or PostgreSQL: "
        "`postgresql://user:password@host/db`); only its `synapse_tool_runs` table is Synapse's. "
        "`sqlite:///<data_dir>/demo.db` (seeded with the demo `orders`) when unset.",
    )
    sql_max_rows: int = Field(
        default=10_000,
        gt=0,
        validation_alias=env("sql_max_rows", "SYNAPSE_SQL_MAX_ROWS"),
        description="Rows a SQL result keeps (the rest are counted). A result larger than "
        "SYNAPSE_INLINE_BYTES is stored as an artifact and previewed.",
    )
    sql_read_timeout_seconds: float = Field(
        default=10.0,
        gt=0,
        le=25,
        validation_alias=env("sql_read_timeout_seconds", "SYNAPSE_SQL_READ_TIMEOUT_SECONDS"),
        description="How long a read that runs without approval may take (rows fetched included); "
        "past it the read is stopped and the agent told so. At most 25: a SQL call is retried "
        "after 30 s.",
    )
    terminal_backend: Literal["pty", "ttyd"] = Field(
        default="pty",
        validation_alias=env("terminal_backend", "SYNAPSE_TERMINAL_BACKEND"),
        description="`pty`: bash on a PTY of the worker; `ttyd`: the terminal at SYNAPSE_TTYD_URL.",
    )
    ttyd_url: str = Field(
        default="ws://127.0.0.1:7681/ws",
        validation_alias=env("ttyd_url", "SYNAPSE_TTYD_URL"),
        description="WebSocket URL of ttyd (backend `ttyd`).",
    )
    ttyd_credential: str | None = Field(
        default=None,
        validation_alias=env("ttyd_credential", "SYNAPSE_TTYD_CREDENTIAL"),
        description="`user:pass` of ttyd's `-c` (basic auth and token).",
    )
    terminal_cwd: Path | None = Field(
        default=None,
        validation_alias=env("terminal_cwd", "SYNAPSE_TERMINAL_CWD"),
        description="Where a session's terminal starts (default: the worker's working directory).",
    )
    terminal_allow: str = Field(
        default="ls,pwd,cat,head,tail,wc,echo,date,whoami,uname,grep,find,stat,du,df,git",
        validation_alias=env("terminal_allow", "SYNAPSE_TERMINAL_ALLOW"),
        description="Read-only programs that run without approval inside the trusted folders "
        "(comma-separated; a command with pipes, redirects or `;` always asks; `git` only with a "
        "read-only subcommand: status, log, diff, show, branch, rev-parse).",
    )
    terminal_trusted: str = Field(
        default="",
        validation_alias=env("terminal_trusted", "SYNAPSE_TERMINAL_TRUSTED"),
        description="Folders (comma-separated) an allowlisted program may read without approval, in "
        "a read-only sandbox that shows nothing else (default: the terminal's cwd).",
    )
    terminal_sandbox: SandboxProfile = Field(
        default=SandboxProfile.WORKSPACE_WRITE,
        validation_alias=env("terminal_sandbox", "SYNAPSE_TERMINAL_SANDBOX"),
        description="Sandbox of approved commands on PTY terminals unless the session, its agent or "
        "the approver chooses another: `workspace-write` (writes only under SYNAPSE_TERMINAL_WORKSPACE "
        "and a /tmp of its own; the network with SYNAPSE_TERMINAL_NETWORK=host), `read-only`, or `full` "
        "(no sandbox).",
    )
    terminal_network: Literal["none", "host"] = Field(
        default="none",
        validation_alias=env("terminal_network", "SYNAPSE_TERMINAL_NETWORK"),
        description="`host`: `workspace-write` commands share the host's network, and so reach every "
        "service listening on it (Synapse's API and Temporal among them: set it only where those ask "
        "for credentials a sandbox does not have); `none`: no sandbox has a network.",
    )
    terminal_workspace: Path | None = Field(
        default=None,
        validation_alias=env("terminal_workspace", "SYNAPSE_TERMINAL_WORKSPACE"),
        description="The folder `workspace-write` commands may write to (default: the terminal's cwd).",
    )
    terminal_env: str = Field(
        default="",
        validation_alias=env("terminal_env", "SYNAPSE_TERMINAL_ENV"),
        description="Names of the worker's environment variables a terminal is given (comma-separated), "
        "besides PATH, HOME, USER, LANG, LC_*, TZ and TMPDIR: the worker's secrets stay out of it.",
    )
    terminal_bwrap: str = Field(
        default="bwrap",
        validation_alias=env("terminal_bwrap", "SYNAPSE_TERMINAL_BWRAP"),
        description="The bubblewrap program sandboxes are made with (Debian package `bubblewrap`); "
        "without it, every command needs approval and approved ones need the `full` profile.",
    )
    terminal_sandbox_uid: int = Field(
        default=60001,
        gt=0,
        lt=2**32 - 1,
        validation_alias=env("terminal_sandbox_uid", "SYNAPSE_TERMINAL_SANDBOX_UID"),
        description="When the worker runs as root: the uid (and gid) its sandboxed commands run as, "
        "never root; pick one no account or file of the host uses. `workspace-write` writes the "
        "workspace through an ACL entry for it. A worker that is not root runs them as itself.",
    )
    terminal_timeout_seconds: float = Field(
        default=240.0,
        gt=0,
        validation_alias=env("terminal_timeout_seconds", "SYNAPSE_TERMINAL_TIMEOUT_SECONDS"),
        description="A command running longer gets Ctrl-C.",
    )
    terminal_idle_seconds: float = Field(
        default=120.0,
        gt=0,
        validation_alias=env("terminal_idle_seconds", "SYNAPSE_TERMINAL_IDLE_SECONDS"),
        description="A command silent this long (e.g. waiting for input) gets Ctrl-C.",
    )
    terminal_heartbeat_seconds: float = Field(
        default=10.0,
        gt=0,
        validation_alias=env("terminal_heartbeat_seconds", "SYNAPSE_TERMINAL_HEARTBEAT_SECONDS"),
        description="A running command heartbeats; silent this long, its worker is taken for gone.",
    )
    terminal_worker_wait_seconds: float = Field(
        default=20.0,
        gt=0,
        validation_alias=env("terminal_worker_wait_seconds", "SYNAPSE_TERMINAL_WORKER_WAIT_SECONDS"),
        description="How long a command waits for the worker holding its session's terminal; "
        "then that terminal is lost and the next command starts a fresh one.",
    )


KIB = 1024
MIB = 1024 * KIB


MAX_JSON_DEPTH_CEILING = 128
"""Highest `SYNAPSE_MAX_JSON_DEPTH`: far below the 200 levels pydantic's JSON parser reads (the
worker's payloads), leaving room for the models a value is carried in (`core/nesting.py`)."""


class LimitSettings(_Group):
    """How big things may be: at the door (413 above), inline in history, and out of it."""

    max_request_bytes: int = Field(
        default=1 * MIB,
        gt=0,
        validation_alias=env("max_request_bytes", "SYNAPSE_MAX_REQUEST_BYTES"),
        description="Largest request body the API reads (except artifact uploads); 413 above it.",
    )
    max_message_bytes: int = Field(
        default=64 * KIB,
        gt=0,
        validation_alias=env("max_message_bytes", "SYNAPSE_MAX_MESSAGE_BYTES"),
        description="Largest message (UTF-8 bytes of its content), over HTTP or chat; larger text "
        "goes in an artifact (`POST /artifacts`).",
    )
    max_comment_bytes: int = Field(
        default=4 * KIB,
        gt=0,
        validation_alias=env("max_comment_bytes", "SYNAPSE_MAX_COMMENT_BYTES"),
        description="Largest decision comment or intervention reason.",
    )
    max_blueprint_bytes: int = Field(
        default=256 * KIB,
        gt=0,
        validation_alias=env("max_blueprint_bytes", "SYNAPSE_MAX_BLUEPRINT_BYTES"),
        description="Largest task graph (PlanBlueprint as JSON) an agent may propose.",
    )
    max_json_depth: int = Field(
        default=64,
        ge=8,
        le=MAX_JSON_DEPTH_CEILING,
        validation_alias=env("max_json_depth", "SYNAPSE_MAX_JSON_DEPTH"),
        description="How deeply a request body's JSON may nest (the body itself is level 1); 422 "
        "naming the path above it. Agents' answers and tools' results nested deeper are cut there. "
        f"At most {MAX_JSON_DEPTH_CEILING}: Temporal payloads are read back only to 200 levels.",
    )
    max_artifact_bytes: int = Field(
        default=50 * MIB,
        gt=0,
        validation_alias=env("max_artifact_bytes", "SYNAPSE_MAX_ARTIFACT_BYTES"),
        description="Largest artifact upload (`POST /artifacts`).",
    )
    inline_bytes: int = Field(
        default=16 * KIB,
        gt=0,
        validation_alias=env("inline_bytes", "SYNAPSE_INLINE_BYTES"),
        description="A tool result or agent answer larger than this (as JSON) is stored as an "
        "artifact; history, the stream and the agent get a preview of about this size and its id.",
    )
    claim_check_bytes: int = Field(
        default=256 * KIB,
        gt=0,
        validation_alias=env("claim_check_bytes", "SYNAPSE_CLAIM_CHECK_BYTES"),
        description="Any Temporal payload at least this big is kept in the artifact store and "
        "only referenced in history (the SDK's external storage); the safety net under the limits.",
    )


class ArtifactSettings(_Group):
    """Where artifacts (and claim-checked Temporal payloads) are kept."""

    url: str | None = Field(
        default=None,
        pattern=r"^s3://[a-z0-9][a-z0-9.\-]{1,61}[a-z0-9](/.*)?$",
        validation_alias=env("url", "SYNAPSE_ARTIFACTS_URL"),
        description="`s3://bucket/prefix` to keep artifacts in an S3-compatible bucket (every worker "
        "and API process must share it); unset: `<data_dir>/artifacts.db` on this machine.",
    )
    s3_endpoint_url: str | None = Field(
        default=None,
        validation_alias=env("s3_endpoint_url", "SYNAPSE_S3_ENDPOINT_URL"),
        description="Endpoint of a non-AWS S3-compatible service (MinIO, Ceph, R2, ...).",
    )
    s3_region: str | None = Field(
        default=None,
        validation_alias=env("s3_region", "SYNAPSE_S3_REGION"),
        description="The bucket's region (else boto3's default: AWS_REGION / the AWS config).",
    )


class WebhookSettings(_Group):
    """Notifications of interactions POSTed to a session's `notify_url`."""

    secret: str | None = Field(
        default=None,
        validation_alias=env("secret", "SYNAPSE_WEBHOOK_SECRET"),
        description="Key of the HMAC-SHA256 signature every notification carries; sessions may name "
        "a `notify_url` only when it is set.",
    )
    timeout_seconds: float = Field(
        default=10.0,
        gt=0,
        validation_alias=env("timeout_seconds", "SYNAPSE_WEBHOOK_TIMEOUT_SECONDS"),
        description="How long one POST may take before it is retried.",
    )
    allow: str | None = Field(
        default=None,
        validation_alias=env("allow", "SYNAPSE_WEBHOOK_ALLOW"),
        description="Hosts or CIDRs (comma-separated, e.g. `hooks.internal,10.1.0.0/16`) a `notify_url` "
        "may reach although they are loopback, private, link-local or reserved: the one way to allow an "
        "internal receiver. Set it on the API and the workers.",
    )

    @field_validator("allow")
    @classmethod
    def _allow_parses(cls, value: str | None) -> str | None:
        OutboundPolicy.from_setting(value)  # a bad entry is an error at start, naming it
        return value

    @property
    def policy(self) -> OutboundPolicy:
        """Where notifications may go: public addresses and what `allow` names."""
        return OutboundPolicy.from_setting(self.allow)


class LarkSettings(_Group):
    """The Lark/Feishu channel; on when `app_id` is set."""

    app_id: str | None = Field(
        default=None,
        validation_alias=env("app_id", "LARK_APP_ID", "SYNAPSE_LARK_APP_ID"),
        description="Lark/Feishu app id; the Lark channel is on when it is set.",
    )
    app_secret: str | None = Field(
        default=None,
        validation_alias=env("app_secret", "LARK_APP_SECRET", "SYNAPSE_LARK_APP_SECRET"),
        description="App secret.",
    )
    verification_token: str | None = Field(
        default=None,
        validation_alias=env(
            "verification_token", "LARK_VERIFICATION_TOKEN", "SYNAPSE_LARK_VERIFICATION_TOKEN"
        ),
        description="Event subscription verification token.",
    )
    encrypt_key: str | None = Field(
        default=None,
        validation_alias=env("encrypt_key", "LARK_ENCRYPT_KEY", "SYNAPSE_LARK_ENCRYPT_KEY"),
        description="Event encrypt key (payload encryption and request signatures).",
    )
    domain: str = Field(
        default="https://open.feishu.cn",
        validation_alias=env("domain", "LARK_DOMAIN", "SYNAPSE_LARK_DOMAIN"),
        description="Open API base URL: Feishu, Lark international (https://open.larksuite.com), or any URL.",
    )
    admins: str = Field(
        default="",
        validation_alias=env("admins", "LARK_ADMINS", "SYNAPSE_LARK_ADMINS"),
        description="Comma-separated open_ids who may approve any request in Lark chats.",
    )
    requesters_decide: bool = Field(
        default=True,
        validation_alias=env("requesters_decide", "LARK_REQUESTERS_DECIDE", "SYNAPSE_LARK_REQUESTERS_DECIDE"),
        description="Whether a chat member may decide the requests their own messages led to (seed 001's "
        "chats); false: only `admins` decide in Lark chats (every other member can still talk to the agent).",
    )
    bot_open_id: str | None = Field(
        default=None,
        validation_alias=env("bot_open_id", "LARK_BOT_OPEN_ID", "SYNAPSE_LARK_BOT_OPEN_ID"),
        description="The bot's open_id: in groups only mentions of it count (any mention when unset).",
    )
    mode: str = Field(
        default="webhook",
        validation_alias=env("mode", "LARK_MODE", "SYNAPSE_LARK_MODE"),
        description="`webhook` (events POSTed to /channels/lark/events) or `websocket` (the SDK's long connection).",
    )

    @property
    def enabled(self) -> bool:
        """The Lark channel is on when an app id is configured."""
        return bool(self.app_id)

    @property
    def admin_ids(self) -> list[str]:
        """`admins` as a list of open_ids."""
        return [item.strip() for item in self.admins.split(",") if item.strip()]


DINGTALK_MODES = ("stream", "webhook")


class ChannelConfigError(ValueError):
    """A chat channel is on but cannot work with the configured settings (names what to set)."""


class DingTalkSettings(_Group):
    """The DingTalk (钉钉) channel; on when `client_id` is set."""

    client_id: str | None = Field(
        default=None,
        validation_alias=env("client_id", "DINGTALK_CLIENT_ID", "SYNAPSE_DINGTALK_CLIENT_ID"),
        description="The app's Client ID (AppKey); the DingTalk channel is on when it is set.",
    )
    client_secret: str | None = Field(
        default=None,
        validation_alias=env("client_secret", "DINGTALK_CLIENT_SECRET", "SYNAPSE_DINGTALK_CLIENT_SECRET"),
        description="The app's Client Secret (AppSecret); also the key of webhook signatures.",
    )
    robot_code: str | None = Field(
        default=None,
        validation_alias=env("robot_code", "DINGTALK_ROBOT_CODE", "SYNAPSE_DINGTALK_ROBOT_CODE"),
        description="The bot's robotCode; the client id when unset (as for an app's own bot).",
    )
    admins: str = Field(
        default="",
        validation_alias=env("admins", "DINGTALK_ADMINS", "SYNAPSE_DINGTALK_ADMINS"),
        description="Comma-separated userIds (staff ids) who may approve any request in DingTalk chats.",
    )
    requesters_decide: bool = Field(
        default=True,
        validation_alias=env(
            "requesters_decide", "DINGTALK_REQUESTERS_DECIDE", "SYNAPSE_DINGTALK_REQUESTERS_DECIDE"
        ),
        description="Whether a chat member may decide the requests their own messages led to; false: "
        "only `admins` decide in DingTalk chats (every other member can still talk to the agent).",
    )
    card_template_id: str | None = Field(
        default=None,
        validation_alias=env(
            "card_template_id", "DINGTALK_CARD_TEMPLATE_ID", "SYNAPSE_DINGTALK_CARD_TEMPLATE_ID"
        ),
        description="The approval card's template (built in DingTalk's card builder; README lists its "
        "variables). Without it approval requests go as Markdown, answered with 确认/取消.",
    )
    mode: str = Field(
        default="stream",
        validation_alias=env("mode", "DINGTALK_MODE", "SYNAPSE_DINGTALK_MODE"),
        description="`stream` (the SDK's Stream connection, no public URL) or `webhook` (bot messages "
        "POSTed to /channels/dingtalk/events; card clicks still come over Stream).",
    )
    openapi_endpoint: str = Field(
        default="https://api.dingtalk.com",
        validation_alias=env("openapi_endpoint", "DINGTALK_OPENAPI_ENDPOINT"),
        description="The Open API and Stream gateway base URL (the SDK's own variable).",
    )

    @property
    def enabled(self) -> bool:
        """The DingTalk channel is on when a client id is configured."""
        return bool(self.client_id)

    @property
    def robot(self) -> str:
        """The bot's robotCode."""
        return self.robot_code or self.client_id or ""

    @property
    def admin_ids(self) -> list[str]:
        """`admins` as a list of userIds."""
        return [item.strip() for item in self.admins.split(",") if item.strip()]

    def check(self) -> None:
        """Raise `ChannelConfigError`, naming the variable to set, when the channel is on but cannot work."""
        if not self.enabled:
            return
        if self.mode not in DINGTALK_MODES:
            raise ChannelConfigError(
                f"DINGTALK_MODE is {self.mode!r}; expected one of {', '.join(DINGTALK_MODES)}"
            )
        if not self.client_secret:
            raise ChannelConfigError(
                "the DingTalk channel is on (DINGTALK_CLIENT_ID is set) but DINGTALK_CLIENT_SECRET is not "
                "set; copy it from the app's page in the DingTalk developer console, or unset "
                "DINGTALK_CLIENT_ID to turn the channel off"
            )


class Settings(BaseSettings):
    """Synapse configuration, from environment variables (and `.env`), grouped by concern."""

    model_config = SettingsConfigDict(
        env_prefix="SYNAPSE_", env_file=".env", extra="ignore", populate_by_name=True
    )

    data_dir: Path = Field(default=Path(".synapse"), description="Where state lives (SYNAPSE_DATA_DIR).")
    agents_file: Path | None = Field(
        default=None,
        description="TOML file declaring agents and groups (SYNAPSE_AGENTS_FILE); `./synapse.toml` or "
        "`~/.synapse/agents.toml` when unset (see core/agent_registry.py).",
    )
    console_url: str | None = Field(
        default=None,
        description="Public URL of the web console (SYNAPSE_CONSOLE_URL), for the links in webhook "
        "notifications and Lark cards; `http://<api host>:<api port>/ui/` when unset.",
    )
    rules_url: str | None = Field(
        default=None,
        description="SQLAlchemy URL of the approval rules every API and worker shares (SYNAPSE_RULES_URL); "
        "`sqlite:///<data_dir>/rules.db` when unset.",
    )
    experience_url: str | None = Field(
        default=None,
        pattern=r"^(sqlite|postgresql)(\+\w+)?://",
        description="Where finished turns are indexed for recall (SYNAPSE_EXPERIENCE_URL): "
        "`postgresql://user:password@host/db` to share it between machines, or `sqlite:///path`; "
        "`sqlite:///<data_dir>/experience.db` when unset.",
    )
    log_format: Literal["text", "json"] = Field(
        default="text",
        description="Log lines of the worker and the API (SYNAPSE_LOG_FORMAT): `text`, or `json` (one "
        "object per line with session key, graph id, interaction id; see core/logs.py).",
    )
    temporal: TemporalSettings = Field(default_factory=TemporalSettings)
    api: ApiSettings = Field(default_factory=ApiSettings)
    tools: ToolSettings = Field(default_factory=ToolSettings)
    limits: LimitSettings = Field(default_factory=LimitSettings)
    artifacts: ArtifactSettings = Field(default_factory=ArtifactSettings)
    lark: LarkSettings = Field(default_factory=LarkSettings)
    dingtalk: DingTalkSettings = Field(default_factory=DingTalkSettings)
    webhooks: WebhookSettings = Field(default_factory=WebhookSettings)

    def console_link(self, workflow_id: str, interaction_id: str | None = None) -> str:
        """Where the workflow that asks (a session `session:<key>`, a graph `graph:<uuid>` or one of
        its task runs `graph:<uuid>:task:…`) is opened in the web console, at one of its requests:
        a graph's requests, its task runs' too, are decided on the graph's page."""
        base = self.console_url or f"http://{self.api.host}:{self.api.port}/ui/"
        if workflow_id.startswith(GRAPH_PREFIX):
            page = f"graphs/{quote(workflow_id.removeprefix(GRAPH_PREFIX).split(':', 1)[0], safe='')}"
        else:
            page = f"sessions/{quote(workflow_id.removeprefix(SESSION_PREFIX), safe='')}"
        link = f"{base.rstrip('/')}/#/{page}"
        return f"{link}?interaction={quote(interaction_id, safe='')}" if interaction_id else link

    @property
    def demo_db_url(self) -> str:
        """The SQL tool's database URL."""
        return self.tools.sql_url or f"sqlite:///{self.data_dir / 'demo.db'}"

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """Arguments first, then the environment, then `.env`; group fields from flat variables."""
        assert isinstance(env_settings, EnvSettingsSource) and isinstance(dotenv_settings, EnvSettingsSource)
        grouped = _GroupedVariables(settings_cls, env_settings, dotenv_settings)
        return init_settings, env_settings, grouped, dotenv_settings, file_secret_settings


class _GroupedVariables(PydanticBaseSettingsSource):
    """Reads each group's fields from their own flat variables (first `environ`, then `.env`)."""

    def __init__(self, settings_cls: type[BaseSettings], *sources: EnvSettingsSource) -> None:
        super().__init__(settings_cls)
        self._sources = sources

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        """Unused: `__call__` reads whole groups."""
        return None, field_name, False

    def __call__(self) -> dict[str, Any]:
        values: dict[str, dict[str, Any]] = {}
        for group_name, group_field in self.settings_cls.model_fields.items():
            group = group_field.annotation
            if not (isinstance(group, type) and issubclass(group, _Group)):
                continue
            for name, field in group.model_fields.items():
                found = self._lookup(field)
                if found is not None:
                    values.setdefault(group_name, {})[name] = found
        return values

    def _lookup(self, field: FieldInfo) -> str | None:
        alias = field.validation_alias
        names = [str(choice) for choice in alias.choices[1:]] if isinstance(alias, AliasChoices) else []
        for source in self._sources:
            for name in names:
                value = source.env_vars.get(name.lower())
                if value is not None:
                    return value
        return None


def variable_of(loc: tuple[int | str, ...]) -> str:
    """The environment variable behind a settings field location, e.g. `("api", "port")`."""
    if len(loc) >= 2 and loc[0] in Settings.model_fields:
        group = Settings.model_fields[str(loc[0])].annotation
        if isinstance(group, type) and issubclass(group, _Group) and loc[1] in group.model_fields:
            alias = group.model_fields[str(loc[1])].validation_alias
            if isinstance(alias, AliasChoices) and len(alias.choices) > 1:
                return str(alias.choices[1])
    return f"SYNAPSE_{str(loc[0]).upper()}" if loc else "a setting"
