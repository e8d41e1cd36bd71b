"""Which code path a run follows: decided once, in `@workflow.init`, never where a change is used.

Why: the SDK answers `workflow.patched()` on replay by looking for the change's marker in the
workflow task being replayed. A first run whose workflow task timed out while a local activity
ran resumes only in the next task, so a change first asked right after a local activity is
answered differently on replay than the first time: the run takes the old path although it is
new, or fails with "Non-deprecated patch marker encountered" and is stuck. `begin` (called by
`supervise`, before the run can await anything) decides every change at once.

1.0 is generation 1, with no change (`AT_START` empty). A change to what workflows do after 1.0
appends an id to `AT_START` (that makes the next generation) and asks `patched(id)` where it is
used. Synapse's starters (the API, continue-as-new, a session's graph, a graph's task runs) put
`GENERATION` in the run's input: a run of generation G takes the first G - 1 changes and writes
no marker. A run whose input says none (a client of its own) writes a marker per change when it
starts. A worker refuses a generation newer than its code (`NewerGeneration`: the workflow task is
retried until a newer worker takes it; the run is not failed). Never rename, reorder or drop an id.
"""

from __future__ import annotations

import asyncio
import weakref

from temporalio import workflow

AT_START: tuple[str, ...] = ()
"""Changes made since 1.0, in the order they were made; each decided at every run's start."""
GENERATION = 1 + len(AT_START)
"""The generation Synapse's starters put in a new run's input: every change made so far."""

_TAKEN: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, frozenset[str]] = weakref.WeakKeyDictionary()
"""The changes each run takes, by the run's event loop (the SDK gives every run one, in the sandbox
or not); forgotten with the run."""


class NewerGeneration(RuntimeError):
    """A run of a generation this worker's code does not know: raised in `@workflow.init`, so its
    workflow task fails and is retried until a worker of that generation or a newer one takes it."""


def changes_of(generation: int) -> frozenset[str]:
    """Every change a run of `generation` takes."""
    if generation < 1:
        raise ValueError(f"no run is of generation {generation}: the first (1.0) is 1")
    if generation > GENERATION:
        raise NewerGeneration(
            f"this run is of generation {generation}; this worker's code runs generations 1 to "
            f"{GENERATION}: a newer worker must take it"
        )
    return frozenset(AT_START[: generation - 1])


def begin(generation: int | None = None) -> None:
    """Decide this run's changes; call in `@workflow.init`, before the run can await anything.

    By the `generation` its input says (no marker), else by a marker per change (a new run writes
    them all; a replaying run finds those it wrote)."""
    taken = (
        changes_of(generation)
        if generation is not None
        else frozenset(change for change in AT_START if workflow.patched(change))
    )
    _TAKEN[asyncio.get_running_loop()] = taken


def patched(change: str) -> bool:
    """Whether this run takes `change` (one of `AT_START`), as `begin` decided it."""
    if change not in AT_START:
        raise ValueError(f"unknown change {change!r}: add new changes to AT_START in {__name__}")
    taken = _TAKEN.get(asyncio.get_running_loop())
    if taken is None:
        raise RuntimeError(f"change {change!r} asked before the run decided its changes (`begin`)")
    return change in taken
