"""Where graph tasks, edges and graphs are: the statuses the graph contracts and the stream's events share."""

from __future__ import annotations

from enum import StrEnum


class TaskStatus(StrEnum):
    """Where a graph task is."""

    PENDING = "pending"
    """Waiting for its incoming edges."""
    WAITING = "waiting"
    """Gated: waiting for a person's confirmation."""
    READY = "ready"
    """May start; queued behind the running-task cap or a pause."""
    RUNNING = "running"
    COMPLETED = "completed"
    FAILED = "failed"
    SKIPPED = "skipped"
    """Not run: its edges were not taken, its gate was denied, or a plan said so."""
    CANCELLED = "cancelled"


class EdgeStatus(StrEnum):
    """Where an edge is."""

    WAITING = "waiting"
    """Its source has not finished."""
    TAKEN = "taken"
    """Its source completed and its condition held (or it has none)."""
    NOT_TAKEN = "not_taken"
    """Its condition was false, or its source did not complete."""
    ERROR = "error"
    """Its condition could not be evaluated (`error` says why); never read as false."""


class GraphStatus(StrEnum):
    """Where a whole graph is."""

    RUNNING = "running"
    PAUSED = "paused"
    COMPLETED = "completed"
    FAILED = "failed"
    """Finished, with at least one task failed and no `on_failure` to follow; or its workflow failed
    outside Synapse's code while it ran (`reason` says how)."""
    CANCELLED = "cancelled"
    TERMINATED = "terminated"
    """Its workflow was terminated in Temporal while it ran (`temporal workflow terminate`, or
    Temporal itself, e.g. for a workflow task over its limits); `reason` gives the terminate reason.
    Nothing of it runs or waits any more."""
    TIMED_OUT = "timed_out"
    """Its workflow ran past the execution timeout it was started with; nothing of it runs any more."""
