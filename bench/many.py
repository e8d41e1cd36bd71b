"""Many waiting sessions: start N that each wait for approval, hold them, approve them all.

Synapse: N × `POST /sessions/{key}/messages` with an INSERT (signal-with-start), `concurrency` in
flight, each until its approval is pending (its history shows `SynapseStatus` set to
`waiting_approval`); then N × HTTP approve, same concurrency, each until its 200 with the applied
result. Bare, alternating by phase (Synapse start, bare start, Synapse approve, bare approve):
N × signal-with-start of a workflow that waits for an update, each until its first workflow task
completed; then N × `execute_update` whose handler runs one activity. Waits read history by the
server's long-poll, so the benchmark adds no worker load while sessions get ready. Memory: VmRSS
of this process (worker, API and client live here) and of the dev server, before and while all
wait; CPU: of both, per workflow, over each phase.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from temporalio.client import WorkflowHandle

from workflows.session import SessionWorkflow

from . import synapse
from .bare import BareUpdates
from .harness import Harness, Stack, cpu_seconds, rss_mb
from .history import task_completed, wait_event
from .stats import Measure, Result, Row, bounded, one, progress


class _Side:
    """One side's N workflows: start them all, then approve them all; times and CPU per phase."""

    def __init__(self, stack: Stack, count: int, server: int | None = None) -> None:
        self.stack = stack
        self.count = count
        self.server = server
        self.times: dict[str, list[float]] = {}
        self.totals: dict[str, float] = {}
        self.cpu: dict[str, tuple[float, float]] = {}

    async def start(self, concurrency: int) -> None:
        await self._phase("start", concurrency, [self._start_one for _ in range(self.count)])

    async def approve(self, concurrency: int) -> None:
        await self._phase("approve", concurrency, [self._approver(i) for i in range(self.count)])

    async def _phase(self, name: str, concurrency: int, jobs: list[Any]) -> None:
        cpu, started = self._cpu(), time.perf_counter()
        self.times[name] = await bounded(concurrency, jobs)
        self.totals[name] = time.perf_counter() - started
        now = self._cpu()
        self.cpu[name] = ((now[0] - cpu[0]) * 1000 / self.count, (now[1] - cpu[1]) * 1000 / self.count)

    def _cpu(self) -> tuple[float, float]:
        return cpu_seconds(), cpu_seconds(self.server) if self.server else 0.0

    async def prepare_approvals(self, concurrency: int) -> None:
        """Anything the approvals need to know (untimed, between the phases)."""

    async def _start_one(self) -> float:
        raise NotImplementedError

    def _approver(self, i: int) -> Any:
        raise NotImplementedError


class _Synapse(_Side):
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


class _Bare(_Side):
    def __init__(self, stack: Stack, count: int, server: int | None = None) -> None:
        super().__init__(stack, count, server)
        self.waiting: list[WorkflowHandle[Any, Any]] = []

    async def _start_one(self) -> float:
        started = time.perf_counter()
        handle = await self.stack.client.start_workflow(
            BareUpdates.run,
            id=self.stack.key("bare-many"),
            task_queue=self.stack.bare_queue,
            start_signal="message",
            start_signal_args=["approve this"],
        )
        await wait_event(handle, task_completed, within=synapse.WAIT_WITHIN, what=f"{handle.id} running")
        elapsed = time.perf_counter() - started
        self.waiting.append(handle)
        return elapsed

    def _approver(self, i: int) -> Any:
        async def approve() -> float:
            started = time.perf_counter()
            await self.waiting[i].execute_update(BareUpdates.with_activity, "approve")
            return time.perf_counter() - started

        return approve


async def run(harness: Harness, *, sessions: int, concurrency: int, warmup: int) -> Result:
    """Measure and return the 'many' rows."""
    async with harness.stack("many") as stack:
        progress(f"many: warm-up ({warmup} sessions and bare workflows, started and approved)")
        for side in (_Synapse(stack, warmup), _Bare(stack, warmup)):
            await side.start(concurrency)
            await side.prepare_approvals(concurrency)
            await side.approve(concurrency)
        server = harness.server_pid
        syn, bare = _Synapse(stack, sessions, server), _Bare(stack, sessions, server)
        memory: dict[str, tuple[float, float]] = {"base": (rss_mb(), rss_mb(server) if server else 0.0)}
        for name, side in (("synapse", syn), ("bare", bare)):
            progress(f"many: starting {sessions} {name} workflows, {concurrency} at a time")
            before = (rss_mb(), rss_mb(server) if server else 0.0)
            await side.start(concurrency)
            memory[name] = (rss_mb() - before[0], (rss_mb(server) - before[1]) if server else 0.0)
        for name, side in (("synapse", syn), ("bare", bare)):
            await side.prepare_approvals(concurrency)
            progress(f"many: approving {sessions} {name} workflows, {concurrency} at a time")
            await side.approve(concurrency)
    return Result(rows=_rows(syn, bare, memory, sessions, concurrency))


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


def _rows(syn: _Side, bare: _Side, memory: dict[str, tuple[float, float]], n: int, c: int) -> list[Row]:
    base_process, base_server = memory["base"]
    start, approve = "start", "approve"
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
            f"higher is better; all pending after {syn.totals[start]:.1f} s vs {bare.totals[start]:.1f} s",
        ),
        _cpu_row("many: CPU per session start", start, syn, bare),
        Row(
            f"many: process RSS growth while {n} wait",
            "MB",
            one(memory["synapse"][0]),
            one(memory["bare"][0]),
            f"VmRSS of this process (workers, API, client) over its {base_process:.0f} MB before; "
            "bare's measured on top of Synapse's",
        ),
        Row(
            f"many: dev server RSS growth while {n} wait",
            "MB",
            one(memory["synapse"][1]),
            one(memory["bare"][1]),
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
            f"{n / syn.totals[approve]:.0f} vs {n / bare.totals[approve]:.0f} approvals/s",
        ),
        _cpu_row("many: CPU per approval", approve, syn, bare),
    ]
