"""Synapse's workflow metrics: approval requests opened and decided, and how long people took.

Emitted through `workflow.metric_meter()`, so they reach the worker's Prometheus endpoint beside
the SDK's own `temporal_*` metrics (SYNAPSE_WORKER_METRICS_ADDRESS), and are not emitted again
while a history replays. They issue no commands: adding or changing one needs no gate (`workflows/versioning`).
"""

from __future__ import annotations

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from contracts import InteractionOutcome, InteractionRequest, InteractionType, Principal


def _kind(request: InteractionRequest | None) -> str:
    return str(request.interaction_type.value if request is not None else "unknown")


def opened(request: InteractionRequest) -> None:
    """Count a request opened."""
    channel = str(request.metadata.get("channel", "unknown"))
    workflow.metric_meter().create_counter(
        "synapse_interactions_opened", "Approval requests, questions and gates opened."
    ).add(1, {"type": _kind(request), "channel": channel})


def outcome_label(outcome: InteractionOutcome, *, question: bool) -> str:
    """`approved`, `denied`, `answered`, `declined`, `timed_out`, `cancelled` or `counted` (the
    API's metrics use it too, so both name outcomes alike)."""
    if not outcome.complete:
        return "counted"
    if outcome.decided_by == Principal.TIMEOUT:
        return "timed_out"
    if outcome.decided_by == Principal.CANCEL:
        return "cancelled"
    if question:
        return "answered" if outcome.approved else "declined"
    return "approved" if outcome.approved else "denied"


def decided(request: InteractionRequest | None, outcome: InteractionOutcome) -> None:
    """Count a decision by outcome and channel; time how long the request waited for it."""
    meter = workflow.metric_meter()
    question = request is not None and request.interaction_type == InteractionType.USER_INPUT
    labels = {
        "type": _kind(request),
        "outcome": outcome_label(outcome, question=question),
        "channel": outcome.channel,
    }
    meter.create_counter("synapse_interactions_decided", "Decisions taken, by outcome and channel.").add(
        1, labels
    )
    if request is not None and outcome.complete:
        waited = max((outcome.decided_at - request.timestamp).total_seconds(), 0.0)
        meter.create_histogram_float(
            "synapse_approval_wait_seconds", "How long a request waited for its decision.", "s"
        ).record(waited, {"type": labels["type"], "outcome": labels["outcome"]})
