"""Which code path a run follows: decided once, in `@workflow.init`, never where a change is used.

Why: the SDK answers `workflow.patched` on replay by looking for the change's marker in the
workflow task being replayed, and a first run whose workflow task timed out during a local
activity resumes only in the next task: a change first asked after a local activity can be
answered otherwise on replay (the old path taken, or "Non-deprecated patch marker encountered"
and a stuck run). So `begin` (called by `supervise`, before the run can await anything) decides
every change at once.

1.0 is generation 1 (`AT_START` empty). A change after it appends an id to `AT_START`, which makes
the next generation, and asks `patched` with that id where it is used. Synapse's starters put
`GENERATION` in a run's input: a run of generation G takes the first G - 1 changes and writes no
marker; a run whose input says none writes a marker per change. A worker refuses a generation
newer than its code (`NewerGeneration`: retried until a newer worker takes the run). Never rename,
reorder or drop an id.
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
