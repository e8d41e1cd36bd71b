"""Every run decides its code versions in `@workflow.init`, before anything can run.

Why not `workflow.patched()` where the change is: the SDK answers it on replay by looking for the
change's marker in the workflow task being replayed. A local activity's result is replayed at its
marker, but a first run whose workflow task timed out while the local activity ran (a stalled
worker) resumes the workflow only in the next task. A change first asked right after a local
activity is then answered differently on replay than it was the first time: the run takes the old
path although it is new, or its replay fails with "Non-deprecated patch marker encountered for
change ..., but there is no corresponding change command" and the workflow is stuck.

So:
- `BASELINE` is decided in `@workflow.init` (`begin`, called by `supervise`): one marker meaning
  "every change in `BEFORE_BASELINE` is on". Runs that started before it have no such marker and
  replay each change's own marker where it was written, exactly as before.
- A change made after the baseline gets a new id in `AT_START`: it too is decided in
  `@workflow.init`, so a run already going keeps its old behavior until its next continue-as-new.
- Never rename or drop an id: recorded and running histories hold them.
"""

from __future__ import annotations

from temporalio import workflow

BASELINE = "synapse-baseline-1"
"""Patch id: the run takes every change in `BEFORE_BASELINE`, decided when it starts."""

BEFORE_BASELINE = frozenset(
    {
        "approval-rules",
        "approve-with-edits",
        "ask-user-questions",
        "bounded-session-state",
        "cancelled-run-answers-its-approver",
        "cel-numbers",
        "continue-as-new-with-queued-messages",
        "door-checks",
        "escalation-card",
        "goto-reach",
        "graph-task-timeout",
        "hand-over-together",
        "index-experience",
        "index-task-results",
        "intervention-fields",
        "loop-cancellation-propagates",
        "noted-cancels",
        "question-status",
        "quick-tools-run-as-local-activities",
        "sessions-run-graphs",
        "task-timeout-active",
        "terminal-sandbox",
        "turns-can-be-cancelled",
        "whole-instance-outputs",
        "whole-outputs",
        "worker-bound-tools",
    }
)
"""Changes made before the baseline: in older runs, each was decided where it is used."""

AT_START: tuple[str, ...] = ("agent-step-heartbeats",)
"""Changes made since the baseline, in the order they were made; each decided at every run's start."""


def begin() -> None:
    """Decide this run's versions; call in `@workflow.init`, before the run can await anything."""
    workflow.patched(BASELINE)
    for change in AT_START:
        workflow.patched(change)


def patched(change: str) -> bool:
    """Whether this run takes `change` (one of `BEFORE_BASELINE` or `AT_START`)."""
    if change in BEFORE_BASELINE:
        return workflow.patched(BASELINE) or workflow.patched(change)
    if change in AT_START:
        return workflow.patched(change)
    raise ValueError(f"unknown change {change!r}: add new changes to AT_START in {__name__}")
