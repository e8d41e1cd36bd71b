"""`settings.temporal`: where Synapse meets Temporal, the worker's capacity, payload encryption."""

from __future__ import annotations

import os

from pydantic import Field, field_validator

from ..codec import EncryptionCodec, parse_keys
from .group import Group, env

SDK_POLLERS = 5
"""The SDK's default number of long polls a worker keeps open per kind of task."""


class TemporalSettings(Group):
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
