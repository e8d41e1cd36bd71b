"""Samples, percentiles, table rows, the alternating sample loop and progress lines."""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

T = TypeVar("T")


def progress(message: str) -> None:
    """One progress line on stderr (the table goes to stdout)."""
    print(f"[bench {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


@dataclass
class Measure:
    """Samples of one quantity on one side (Synapse or bare); a single sample is a plain value."""

    values: list[float] = field(default_factory=list)

    @property
    def p50(self) -> float | None:
        """The median, or None without samples."""
        return statistics.median(self.values) if self.values else None

    @property
    def p99(self) -> float | None:
        """The 99th percentile (inclusive method), or None with fewer than two samples."""
        if len(self.values) < 2:
            return None
        return statistics.quantiles(self.values, n=100, method="inclusive")[98]


def one(value: float) -> Measure:
    """A measure with a single value (a total, a rate, a memory size)."""
    return Measure([value])


@dataclass
class Row:
    """One line of the table: a measure on the Synapse path and on its bare-Temporal shape."""

    name: str
    unit: str
    synapse: Measure | None
    bare: Measure | None
    means: str

    @property
    def ratio(self) -> float | None:
        """Synapse p50 / bare p50, when both exist."""
        if self.synapse is None or self.bare is None:
            return None
        top, bottom = self.synapse.p50, self.bare.p50
        if top is None or bottom is None or top < 0 or bottom <= 0:
            return None  # e.g. a memory growth within noise
        return top / bottom


@dataclass
class Result:
    """What one benchmark reports: table rows and free-text notes printed under the table."""

    rows: list[Row] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


Step = Callable[[int], Awaitable[float]]
"""One sample: does its own (untimed) setup, returns the timed part in seconds."""


async def alternate(name: str, steps: Mapping[str, Step], *, samples: int, warmup: int) -> dict[str, Measure]:
    """Run `warmup + samples` rounds; each round runs every step once, in order (alternating).

    Returns the samples per step in milliseconds, warm-up rounds dropped.
    """
    measures = {key: Measure() for key in steps}
    progress(f"{name}: warm-up ({warmup} rounds of {', '.join(steps)})")
    report_every = max(1, samples // 4)
    for i in range(warmup + samples):
        if i == warmup:
            progress(f"{name}: measuring {samples} rounds")
        for key, step in steps.items():
            seconds = await step(i)
            if i >= warmup:
                measures[key].values.append(seconds * 1000)
        done = i - warmup + 1
        if done > 0 and done % report_every == 0 and done < samples:
            progress(f"{name}: {done}/{samples}")
    return measures


async def poll(
    probe: Callable[[], Awaitable[T]],
    check: Callable[[T], bool],
    *,
    interval: float,
    within: float,
    what: str,
) -> T:
    """Call `probe` every `interval` s until `check` holds; errors count as not yet (e.g. no first task)."""
    last: Any = None
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            value = await probe()
            if check(value):
                return value
            last = value
        except asyncio.CancelledError:
            raise
        except Exception as err:  # the workflow may not have run its first task yet
            last = err
        await asyncio.sleep(interval)
    raise RuntimeError(f"{what}: not reached within {within} s (last answer: {last!r})")


async def bounded(concurrency: int, jobs: Sequence[Callable[[], Awaitable[float]]]) -> list[float]:
    """Run the jobs with at most `concurrency` at a time; their results (seconds) in job order."""
    gate = asyncio.Semaphore(concurrency)

    async def run(job: Callable[[], Awaitable[float]]) -> float:
        async with gate:
            return await job()

    return list(await asyncio.gather(*(run(job) for job in jobs)))
