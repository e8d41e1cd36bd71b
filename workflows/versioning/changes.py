"""Every run decides its code versions in `@workflow.init`, before anything can run.

Why not `workflow.patched()` where the change is: the SDK answers it on replay by looking for the
change's marker in the workflow task being replayed. A local activity's result is replayed at its
marker, but a first run whose workflow task timed out while the local activity ran (a stalled
worker) resumes the workflow only in the next task. A change first asked right after a local
activity is then answered differently on replay than it was the first time: the run takes the old
path although it is new, or its replay fails with "Non-deprecated patch marker encountered for
change ..., but there is no corresponding change command" and the workflow is stuck.

So runs come in generations, each deciding its versions when it starts (`begin`, called by
`supervise`):
- Runs that started before any baseline have no baseline marker and replay each change's own
  marker where it was written (`BEFORE_BASELINE_1`).
- Runs of `BASELINE_1` wrote its marker, meaning "every change in `BEFORE_BASELINE_1` is on", and
  one marker for each change of `AT_START_1`, all in `@workflow.init`.
- Runs of `BASELINE_2` wrote only its marker: every change in `BEFORE_BASELINE_2` is on.
- Runs of `BASELINE_3` wrote only its marker: every change in `BEFORE_BASELINE_3` is on.
- Runs of `BASELINE` (the current one) write only its marker: every change in `BEFORE_BASELINE`
  is on. Each run start costs two history events per marker (the marker and the SDK's upsert of
  `TemporalChangeVersion`), so a new baseline folds the changes made since the last one into one.
- A change made after the baseline gets a new id in `AT_START`: it too is decided in
  `@workflow.init`, so a run already going keeps its old behavior until its next continue-as-new.
- Never rename or drop an id: recorded and running histories hold them.

Runs whose starter says their generation write no marker at all. Synapse's starters (the API, a
continue-as-new, a session starting a graph, a graph starting a task's run) put `GENERATION` in
the run's input (`generation`); a run of generation G takes every change in `BEFORE_BASELINE` and
the first `G - BASELINE_GENERATION` changes of `AT_START` (so appending a change to `AT_START`
makes a new generation). That saves a new run the marker and the SDK's `TemporalChangeVersion`
upsert: two history events and the server's work on them. A worker refuses a run of a generation
newer than its own code (its workflow task fails and is retried until a newer worker takes it),
and a worker older than the `generation` field refuses such an input altogether (inputs refuse
unknown fields): in a rolling upgrade an old worker never runs a new run with old code. A run
whose starter does not say (a client of its own) is decided by markers, as above.

So there is no new baseline any more: a generation's meaning is fixed for as long as a run of it
may be open (`BASELINE_GENERATION` and `BEFORE_BASELINE` stay as they are; later changes are only
ever appended to `AT_START`).
"""

from __future__ import annotations

import asyncio
import weakref

from temporalio import workflow

BASELINE = "synapse-baseline-4"
"""Patch id of the current baseline: the run takes every change in `BEFORE_BASELINE`."""
BASELINE_3 = "synapse-baseline-3"
"""Patch id of the third baseline: the run takes every change in `BEFORE_BASELINE_3`."""
BASELINE_2 = "synapse-baseline-2"
"""Patch id of the second baseline: the run takes every change in `BEFORE_BASELINE_2`."""
BASELINE_1 = "synapse-baseline-1"
"""Patch id of the first baseline: the run takes every change in `BEFORE_BASELINE_1`."""

BEFORE_BASELINE_1 = frozenset(
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
"""Changes made before the first baseline: in older runs, each was decided where it is used."""
AT_START_1: tuple[str, ...] = ("agent-step-heartbeats",)
"""Changes made after the first baseline, before the second: each decided at the start of runs of
`BASELINE_1`."""
NEW_IN_BASELINE_2 = frozenset({"search-attributes-when-changed"})
"""Changes made with the second baseline: only its runs and later ones take them."""
BEFORE_BASELINE_2 = BEFORE_BASELINE_1 | frozenset(AT_START_1) | NEW_IN_BASELINE_2
"""Every change a run of the second baseline takes."""

NEW_IN_BASELINE_3 = frozenset({"quick-agent-steps", "interactions-told-before-finishing"})
"""Changes made with the third baseline: only its runs and later ones take them."""
BEFORE_BASELINE_3 = BEFORE_BASELINE_2 | NEW_IN_BASELINE_3
"""Every change a run of the third baseline takes."""

NEW_IN_BASELINE = frozenset({"experience-in-last-step", "assessed-in-quick-step"})
"""Changes made with the current baseline: only its runs take them (no older run has a marker)."""
BEFORE_BASELINE = BEFORE_BASELINE_3 | NEW_IN_BASELINE
"""Every change a run of the current baseline takes."""

AT_START: tuple[str, ...] = ("one-door",)
"""Changes made since the current baseline, in the order they were made; each decided at every
run's start."""

BASELINE_GENERATION = 4
"""The generation whose runs take what a run of `BASELINE` takes: every change in `BEFORE_BASELINE`."""
GENERATION = BASELINE_GENERATION + len(AT_START)
"""The generation Synapse's starters put in a new run's input: every change made so far."""

_TAKEN: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, frozenset[str]] = weakref.WeakKeyDictionary()
"""The changes each run whose input said its generation takes, by the run's event loop (the SDK
gives every run one, in the sandbox or not); forgotten with the run."""


class NewerGeneration(RuntimeError):
    """A run of a generation this worker's code does not know: raised in `@workflow.init`, so its
    workflow task fails and is retried until a worker of that generation or a newer one takes it."""


def changes_of(generation: int) -> frozenset[str]:
    """Every change a run of `generation` takes."""
    if generation < BASELINE_GENERATION:
        raise ValueError(f"no run is of generation {generation}: the first is {BASELINE_GENERATION}")
    if generation > GENERATION:
        raise NewerGeneration(
            f"this run is of generation {generation}; this worker's code runs generations "
            f"{BASELINE_GENERATION} to {GENERATION}: a newer worker must take it"
        )
    return BEFORE_BASELINE | frozenset(AT_START[: generation - BASELINE_GENERATION])


def begin(generation: int | None = None) -> None:
    """Decide this run's versions; call in `@workflow.init`, before the run can await anything.

    A run whose input says its `generation` writes nothing (a generation this code does not know
    raises `NewerGeneration`). Otherwise a new run writes the current baseline's marker only; a
    run replaying finds the newest marker it wrote (asking for a baseline it did not write
    changes nothing on replay)."""
    if generation is not None:
        _TAKEN[asyncio.get_running_loop()] = changes_of(generation)
        return
    if workflow.patched(BASELINE):
        for change in AT_START:
            workflow.patched(change)
        return
    if workflow.patched(BASELINE_3):
        return
    if workflow.patched(BASELINE_2):
        return
    workflow.patched(BASELINE_1)  # a run from before the second baseline, replaying
    for change in AT_START_1:
        workflow.patched(change)


def patched(change: str) -> bool:
    """Whether this run takes `change` (one of `BEFORE_BASELINE` or `AT_START`)."""
    if change not in BEFORE_BASELINE and change not in AT_START:
        raise ValueError(f"unknown change {change!r}: add new changes to AT_START in {__name__}")
    taken = _TAKEN.get(asyncio.get_running_loop())
    if taken is not None:
        return change in taken
    if change in AT_START:
        return workflow.patched(change)
    if workflow.patched(BASELINE):
        return True
    if change in NEW_IN_BASELINE:
        return False
    if workflow.patched(BASELINE_3):
        return True
    if change in NEW_IN_BASELINE_3:
        return False
    if workflow.patched(BASELINE_2):
        return True
    if change in NEW_IN_BASELINE_2:
        return False
    if change in AT_START_1:
        return workflow.patched(change)
    return workflow.patched(BASELINE_1) or workflow.patched(change)
