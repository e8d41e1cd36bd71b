"""How a workflow ended when Temporal ended it while it ran: terminated, timed out, or failed
outside Synapse's code.

A closed workflow's queries answer with the state of its last workflow task: a graph terminated
while it ran reads `running`, with runs and gates that will never move. `workflow.read` tells
those apart; `ending_of` reads how one ended from its close event: the terminate reason and who
terminated it, the failure's message, the timeout.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from temporalio.api.history.v1 import HistoryEvent
from temporalio.client import Client, WorkflowExecutionStatus, WorkflowHistoryEventFilterType
from temporalio.service import RPCError

from core.times import utc_text

ENDED_AS = {
    WorkflowExecutionStatus.TERMINATED: "terminated",
    WorkflowExecutionStatus.TIMED_OUT: "timed_out",
    WorkflowExecutionStatus.FAILED: "failed",
    WorkflowExecutionStatus.CANCELED: "cancelled",
}
"""The status a graph or session reads as, by how Temporal closed its workflow, when that
happened while it still ran (a graph or session closing by itself completes)."""


@dataclass(frozen=True)
class Ending:
    """How Temporal ended a workflow."""

    status: str
    """`terminated`, `timed_out`, `failed` or `cancelled` (`ENDED_AS`)."""
    reason: str
    """In words: who terminated it and why, the failure's message, the timeout."""
    at: datetime | None
    """When (UTC)."""

    def words(self) -> str:
        """`was terminated at 2025-01-02 10:02:03 UTC (by alice: stuck)`, for refusals."""
        when = f" at {utc_text(self.at)}" if self.at else ""
        return f"{VERBS.get(self.status, self.status)}{when} ({self.reason})"


VERBS = {"terminated": "was terminated", "timed_out": "timed out", "cancelled": "was cancelled"}
"""How `Ending.words` says what happened, where the status does not say it alone (`failed`)."""


async def ending_of(client: Client, workflow_id: str, run_id: str | None = None) -> Ending | None:
    """How the run (the latest one by default) ended, from its close event; None while it runs,
    when it closed by itself (completed, continued as new), or when its history cannot be read."""
    handle = client.get_workflow_handle(workflow_id, run_id=run_id)
    try:
        async for event in handle.fetch_history_events(
            event_filter_type=WorkflowHistoryEventFilterType.CLOSE_EVENT
        ):
            return await _ending(client, event)
    except RPCError:
        return None
    return None


async def _ending(client: Client, event: HistoryEvent) -> Ending | None:
    at = event.event_time.ToDatetime(tzinfo=UTC) if event.HasField("event_time") else None
    if event.HasField("workflow_execution_terminated_event_attributes"):
        terminated = event.workflow_execution_terminated_event_attributes
        by = f"by {terminated.identity}: " if terminated.identity else ""
        return Ending("terminated", f"{by}{terminated.reason or 'no reason given'}", at)
    if event.HasField("workflow_execution_timed_out_event_attributes"):
        return Ending("timed_out", "it ran past the execution timeout it was started with", at)
    if event.HasField("workflow_execution_failed_event_attributes"):
        failure = event.workflow_execution_failed_event_attributes.failure
        error = await client.data_converter.decode_failure(failure)
        return Ending("failed", str(error) or type(error).__name__, at)
    if event.HasField("workflow_execution_canceled_event_attributes"):
        return Ending("cancelled", "a cancellation in Temporal", at)
    return None
