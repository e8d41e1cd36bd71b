"""Many waiting sessions: start N that each wait for approval, hold them, approve them all.

Synapse: N × `POST /sessions/{key}/messages` with an INSERT (signal-with-start), `concurrency` in
flight, each until its approval is pending (its history shows `SynapseStatus` set to
`waiting_approval`); then N × HTTP approve, same concurrency, each until its 200 with the applied
result. Bare: N × signal-with-start of a workflow that waits for an update, each until its first
workflow task completed; then N × `execute_update` whose handler runs one activity. Bare that also
answers: N more such workflows, each approved by an update that runs a local activity (the tool)
and replies, after which the workflow runs one activity (the agent's answer): the steps a Synapse
approval takes, without its status upsert, timers, state and API. Bare keeping the promises: the
answering shape with the commands a Synapse approval keeps by promise (its start's search
attributes, the status upserted as the request opens and as it is decided, the request's timer
started and cancelled, the idle timer: `bare.BareKept`), so a Synapse approval's history has the
same events; the gap left to it is Synapse's own code and payloads. Waits read history by the
server's long-poll, so the benchmark adds no worker load while sessions get ready.

The sides take turns in `rounds` batches of N / rounds, each round beginning with the next side
(Synapse, bare, bare answering, bare keeping the promises; then bare, ...): first every start, then
every approval. No side always goes first (onto the lighter server and heap), and a slow minute
of the machine falls on all; a side's rates, CPU and memory are its batches' sums. An approval
batch ends when what its approvals set off is done (a session's answering step, the bare
answering activity), so none of it runs into the next side's batch. Memory: VmRSS of this process
(worker, API and client live here) and of the dev server, before and after each batch of starts;
CPU: of both, per workflow.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import time
from collections.abc import AsyncIterator, Callable
from typing import Any, TypeVar

from temporalio.client import WorkflowHandle

from workflows.session import SessionWorkflow

from . import synapse
from .bare import BareKept, BareUpdates
from .harness import Harness, Stack, cpu_seconds, rss_mb
from .history import activity_completed, task_completed, wait_event, waits_idle
from .kept import kept_pending
from .stats import Measure, Result, Row, bounded, one, progress

T = TypeVar("T")


def _both(read: Callable[..., float], server: int | None) -> tuple[float, float]:
    """`read` (RSS or CPU) of this process and of the dev server (0 without one)."""
    return read(), read(server) if server else 0.0


class _Side:
    """One side's N workflows: start them all, then approve them all; times and CPU per phase."""

    name = ""

    def __init__(self, stack: Stack, count: int, server: int | None = None) -> None:
        self.stack = stack
        self.count = count
        self.server = server
        self.times: dict[str, list[float]] = {}
        self.totals: dict[str, float] = {}
        self._cpu_seconds: dict[str, tuple[float, float]] = {}
        self.memory = (0.0, 0.0)
        """RSS growth (MB) of this process and of the dev server over this side's starts."""

    @property
    def cpu(self) -> dict[str, tuple[float, float]]:
        """Per phase: CPU milliseconds of this process and of the dev server per workflow."""
        return {
            phase: (process * 1000 / len(self.times[phase]), server * 1000 / len(self.times[phase]))
            for phase, (process, server) in self._cpu_seconds.items()
        }

    async def start(self, concurrency: int, count: int | None = None) -> None:
        """Start `count` more workflows (all of them by default); memory is measured around it."""
        before = _both(rss_mb, self.server)
        async with self._measured("start"):
            jobs = [self._start_one for _ in range(self.count if count is None else count)]
            self.times["start"].extend(await bounded(concurrency, jobs))
        after = _both(rss_mb, self.server)
        self.memory = (self.memory[0] + after[0] - before[0], self.memory[1] + after[1] - before[1])

    async def approve(self, concurrency: int, indexes: range | None = None) -> None:
        """Approve the started workflows at `indexes` (all of them by default), and wait until what
        each approval set off is done (in the phase's time and CPU: it is the phase's work), so
        none of it runs on into the next side's batch."""
        chosen = range(self.count) if indexes is None else indexes
        async with self._measured("approve"):
            self.times["approve"].extend(await bounded(concurrency, [self._approver(i) for i in chosen]))
            await self._settled(chosen, concurrency)

    async def _settled(self, indexes: range, concurrency: int) -> None:
        """Wait until the work the approvals at `indexes` left running is done (none by default)."""

    @contextlib.asynccontextmanager
    async def _measured(self, phase: str) -> AsyncIterator[None]:
        """Add the block's wall time and CPU (this process, the dev server) to `phase`'s."""
        self.times.setdefault(phase, [])
        cpu, started = _both(cpu_seconds, self.server), time.perf_counter()
        yield
        self.totals[phase] = self.totals.get(phase, 0.0) + time.perf_counter() - started
        now = _both(cpu_seconds, self.server)
        spent = self._cpu_seconds.get(phase, (0.0, 0.0))
        self._cpu_seconds[phase] = (spent[0] + now[0] - cpu[0], spent[1] + now[1] - cpu[1])

    async def prepare_approvals(self, concurrency: int) -> None:
        """Anything the approvals need to know (untimed, between the phases)."""

    async def _start_one(self) -> float:
        raise NotImplementedError

    def _approver(self, i: int) -> Any:
        raise NotImplementedError


class _Synapse(_Side):
    name = "synapse"

    def __init__(self, stack: Stack, count: int, server: int | None = None) -> None:
        super().__init__(stack, count, server)
        self.keys: list[str] = []
        self.pending: list[str] = []

    async def _start_one(self) -> float:
        key = self.stack.key("many")
        started = time.perf_counter()
        await synapse.send(self.stack, key, self.stack.destructive_sql())
        await synapse.seen_waiting(self.stack, key)
        elapsed = time.perf_counter() - started
        self.keys.append(key)
        return elapsed

    async def prepare_approvals(self, concurrency: int) -> None:
        """Read each session's pending interaction id."""
        gate = asyncio.Semaphore(concurrency)

        async def first_pending(key: str) -> str:
            async with gate:
                pending = await self.stack.session(key).query(SessionWorkflow.get_pending)
                return str(pending[0].interaction_id)

        self.pending = list(await asyncio.gather(*(first_pending(key) for key in self.keys)))

    def _approver(self, i: int) -> Any:
        async def approve() -> float:
            started = time.perf_counter()
            await synapse.approve(self.stack, self.keys[i], self.pending[i])
            return time.perf_counter() - started

        return approve

    async def _settled(self, indexes: range, concurrency: int) -> None:
        """The approved sessions' turns are over (the agent's answering step ran)."""
        await bounded(concurrency, [functools.partial(_seen_over, self.stack, self.keys[i]) for i in indexes])


class _Bare(_Side):
    name = "bare"

    def __init__(self, stack: Stack, count: int, server: int | None = None, *, queue: str = "") -> None:
        super().__init__(stack, count, server)
        self.queue = queue or stack.bare_queue
        self.waiting: list[WorkflowHandle[Any, Any]] = []

    async def _start_one(self) -> float:
        started = time.perf_counter()
        handle = await self._started()
        await wait_event(handle, task_completed, within=synapse.WAIT_WITHIN, what=f"{handle.id} running")
        elapsed = time.perf_counter() - started
        self.waiting.append(handle)
        return elapsed

    async def _started(self) -> WorkflowHandle[Any, Any]:
        """Signal-with-start one more workflow."""
        return await self.stack.client.start_workflow(
            BareUpdates.run,
            id=self.stack.key("bare-many"),
            task_queue=self.queue,
            start_signal="message",
            start_signal_args=["approve this"],
        )

    update: Any = staticmethod(BareUpdates.with_activity)
    """The approval: update → activity → reply."""

    def _approver(self, i: int) -> Any:
        async def approve() -> float:
            started = time.perf_counter()
            await self.waiting[i].execute_update(self.update, "approve")
            return time.perf_counter() - started

        return approve


class _BareAnswering(_Bare):
    """Bare workflows approved the way a Synapse approval runs, without what Synapse adds."""

    name = "bare answering"
    update = staticmethod(BareUpdates.answered)
    """update → local activity → reply, then an answering activity."""

    async def _settled(self, indexes: range, concurrency: int) -> None:
        """The approved workflows' answering activities completed."""
        await bounded(concurrency, [functools.partial(_answered, self.waiting[i]) for i in indexes])


class _BareKept(_Bare):
    """Bare workflows approved as `_BareAnswering`'s, that also keep the commands a Synapse
    approval keeps by promise: the status upserted, the request's timeout timer started and
    cancelled, the idle timer (`bare.BareKept`); what is left between them and Synapse is
    Synapse's own code (API, state, agent, SQL) and its larger payloads."""

    name = "bare keeping the promises"
    update = staticmethod(BareKept.answered)

    async def _start_one(self) -> float:
        """Until the request shows as waiting (as a session's start is timed)."""
        started = time.perf_counter()
        handle = await kept_pending(self.stack, "bare-kept", "approve this", queue=self.queue)
        elapsed = time.perf_counter() - started
        self.waiting.append(handle)
        return elapsed

    async def _settled(self, indexes: range, concurrency: int) -> None:
        """The approved workflows answered and wait idle."""
        await bounded(concurrency, [functools.partial(_idle, self.waiting[i]) for i in indexes])


async def _idle(handle: WorkflowHandle[Any, Any]) -> float:
    await wait_event(handle, waits_idle, within=synapse.WAIT_WITHIN, what=f"{handle.id} idle")
    return 0.0


async def _seen_over(stack: Stack, key: str) -> float:
    await synapse.seen_over(stack, key)
    return 0.0


async def _answered(handle: WorkflowHandle[Any, Any]) -> float:
    await wait_event(handle, activity_completed, within=synapse.WAIT_WITHIN, what=f"{handle.id} answered")
    return 0.0


async def run(harness: Harness, *, sessions: int, concurrency: int, warmup: int, rounds: int) -> Result:
    """Measure and return the 'many' rows."""
    async with (
        harness.stack("many") as stack,
        stack.another_bare_worker() as answering_queue,
        stack.another_bare_worker() as kept_queue,
    ):
        # Each side has a worker of its own, so each keeps its N workflows in its own cache
        # (the SDK's default holds 1,000).
        progress(f"many: warm-up ({warmup} sessions and bare workflows, started and approved)")
        warm: tuple[_Side, ...] = (
            _Synapse(stack, warmup),
            _Bare(stack, warmup),
            _BareAnswering(stack, warmup, queue=answering_queue),
            _BareKept(stack, warmup, queue=kept_queue),
        )
        for side in warm:
            await side.start(concurrency)
            await side.prepare_approvals(concurrency)
            await side.approve(concurrency)
        server = harness.server_pid
        sides = (
            _Synapse(stack, sessions, server),
            _Bare(stack, sessions, server),
            _BareAnswering(stack, sessions, server, queue=answering_queue),
            _BareKept(stack, sessions, server, queue=kept_queue),
        )
        base = _both(rss_mb, server)
        batches = batches_of(sessions, rounds)
        plan = [
            (f"round {number + 1}/{len(batches)}", batch, side)
            for number, (batch, order) in enumerate(zip(batches, rotating(sides, len(batches)), strict=True))
            for side in order
        ]
        for round_, batch, side in plan:
            progress(f"many: {round_}: starting {len(batch)} {side.name} workflows, {concurrency} at a time")
            await side.start(concurrency, len(batch))
        for side in sides:
            await side.prepare_approvals(concurrency)
        for round_, batch, side in plan:
            progress(f"many: {round_}: approving {len(batch)} {side.name} workflows")
            await side.approve(concurrency, batch)
    return Result(rows=_rows(*sides, base=base, n=sessions, c=concurrency, rounds=len(batches)))


def batches_of(count: int, rounds: int) -> list[range]:
    """`count` indexes in `rounds` consecutive batches as even as can be (fewer when count < rounds)."""
    rounds = max(1, min(rounds, count))
    edges = [count * i // rounds for i in range(rounds + 1)]
    return [range(edges[i], edges[i + 1]) for i in range(rounds)]


def rotating(sides: tuple[T, ...], rounds: int) -> list[tuple[T, ...]]:
    """The order of the sides in each round: each round begins with the next side (AB, BA, AB, ...;
    ABC, BCA, CAB, ABC, ...), so every side goes first, middle and last in turn."""
    return [sides[i % len(sides) :] + sides[: i % len(sides)] for i in range(rounds)]


def _ms(values: list[float]) -> Measure:
    return Measure([value * 1000 for value in values])


def _cpu_row(name: str, phase: str, syn: _Side, bare: _Side) -> Row:
    (syn_process, syn_server), (bare_process, bare_server) = syn.cpu[phase], bare.cpu[phase]
    return Row(
        name,
        "ms",
        one(syn_process + syn_server),
        one(bare_process + bare_server),
        f"CPU time of this process + the dev server per workflow: {syn_process:.1f} + {syn_server:.1f} ms "
        f"vs {bare_process:.1f} + {bare_server:.1f} ms (includes the benchmark's own requests)",
    )


def _rows(
    syn: _Side,
    bare: _Side,
    answering: _Side,
    kept: _Side,
    *,
    base: tuple[float, float],
    n: int,
    c: int,
    rounds: int,
) -> list[Row]:
    base_process, base_server = base
    start, approve = "start", "approve"
    in_rounds = f" ({rounds} rounds, rotating)" if rounds > 1 else ""
    return [
        Row(
            f"many: send → pending, per session (N={n}, c={c})",
            "ms",
            _ms(syn.times[start]),
            _ms(bare.times[start]),
            "POST message (signal-with-start) until its approval is pending; bare: signal-with-start "
            "until the workflow's first task completed",
        ),
        Row(
            f"many: start rate until all {n} pending",
            "sessions/s",
            one(n / syn.totals[start]),
            one(n / bare.totals[start]),
            f"higher is better; all pending after {syn.totals[start]:.1f} s vs {bare.totals[start]:.1f} s"
            f"{in_rounds}",
        ),
        _cpu_row("many: CPU per session start", start, syn, bare),
        Row(
            f"many: process RSS growth while {n} wait",
            "MB",
            one(syn.memory[0]),
            one(bare.memory[0]),
            f"VmRSS of this process (workers, API, client) over its {base_process:.0f} MB before; "
            "each batch measured on top of those before it",
        ),
        Row(
            f"many: dev server RSS growth while {n} wait",
            "MB",
            one(syn.memory[1]),
            one(bare.memory[1]),
            f"VmRSS of the temporal dev server over its {base_server:.0f} MB before",
        ),
        Row(
            f"many: approve, per session (c={c})",
            "ms",
            _ms(syn.times[approve]),
            _ms(bare.times[approve]),
            f"an approver's wait while {c} approve at once; bare: update → activity → reply",
        ),
        Row(
            f"many: approve all {n}",
            "s",
            one(syn.totals[approve]),
            one(bare.totals[approve]),
            f"{n / syn.totals[approve]:.0f} vs {n / bare.totals[approve]:.0f} approvals/s{in_rounds}",
        ),
        _cpu_row("many: CPU per approval", approve, syn, bare),
        Row(
            f"↳ approve all {n}, against a bare approval that also answers",
            "s",
            one(syn.totals[approve]),
            one(answering.totals[approve]),
            f"{n / syn.totals[approve]:.0f} vs {n / answering.totals[approve]:.0f} approvals/s; bare: update → "
            "local activity (the tool) → reply, then an answering activity: the steps of a Synapse "
            "approval without its status upsert, timers, state and API",
        ),
        _cpu_row("↳ CPU per approval, against a bare approval that also answers", approve, syn, answering),
        Row(
            f"↳ start rate until all {n} pending, against bare keeping the promises",
            "sessions/s",
            one(n / syn.totals[start]),
            one(n / kept.totals[start]),
            "higher is better; bare: the answering shape started with a session's search attributes, "
            "its agent's step a local activity, its request's status upserted and timer started",
        ),
        _cpu_row("↳ CPU per session start, against bare keeping the promises", start, syn, kept),
        Row(
            f"↳ dev server RSS growth while {n} wait, against bare keeping the promises",
            "MB",
            one(syn.memory[1]),
            one(kept.memory[1]),
            "VmRSS of the temporal dev server; bare: its waiting workflows carry a session's search "
            "attributes and a running timer",
        ),
        Row(
            f"↳ approve all {n}, against a bare approval that also answers and keeps the promises",
            "s",
            one(syn.totals[approve]),
            one(kept.totals[approve]),
            f"{n / syn.totals[approve]:.0f} vs {n / kept.totals[approve]:.0f} approvals/s; bare: the answering "
            "shape with the status upserted, the request's timer cancelled and the idle timer started: "
            "the same events as a Synapse approval, without Synapse's own code (API, state, agent, SQL)",
        ),
        _cpu_row("↳ CPU per approval, against bare keeping the promises", approve, syn, kept),
    ]
