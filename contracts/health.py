"""What the API says about its own health: `GET /readyz`."""

from __future__ import annotations

from pydantic import Field

from .base import Contract


class Readiness(Contract):
    """Answer of `GET /readyz` (200): a worker polls Synapse's task queue, so messages are processed."""

    status: str = Field(default="ready", description="Always `ready` (not ready is a 503 with `detail`).")
    namespace: str = Field(description="The Temporal namespace.")
    task_queue: str = Field(description="Synapse's task queue (SYNAPSE_TASK_QUEUE).")
    workers: int = Field(
        ge=1, description="Workers that polled the task queue recently (Temporal's pollers)."
    )
