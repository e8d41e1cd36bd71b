"""Turn cost: one agent turn with one approved tool call, wall time and history events.

Synapse (timed from the message): `POST /sessions/{key}/messages` with an INSERT to a fresh
session → its approval pending → `POST .../interactions/{id}` approving → the agent's answer in
the conversation. Bare, alternating: signal-with-start → "agent" activity → wait for the approval
update → "tool" activity → the update replies → the workflow completes. Events: the whole
history of the fresh session once its turn is over (its idle timer started) vs the bare
workflow's whole history.
"""

from __future__ import annotations

import time
from collections import Counter
from typing import Any

from temporalio.client import WorkflowHandle

from . import synapse
from .bare import BareTurn
from .harness import Harness, Stack
from .history import event_counts, wait_event, waits_idle
from .stats import Measure, Result, Row, alternate, poll

POLL = 0.01
"""Seconds between queries while waiting for "pending" and "answered" (both sides poll alike)."""


def _median(by_total: dict[int, Counter[str]], totals: Measure) -> Counter[str]:
    """The event kinds of a sample whose event count is (closest to) the median."""
    if not by_total or totals.p50 is None:
        return Counter()
    median = totals.p50
    return by_total[min(by_total, key=lambda total: abs(total - median))]


def _breakdown(kinds: Counter[str]) -> str:
    return ", ".join(f"{name} {count}" for name, count in kinds.most_common())


async def run(harness: Harness, *, samples: int, warmup: int) -> Result:
    """Measure and return the turn rows and a breakdown of one turn's events."""
    events: dict[str, Measure] = {"synapse": Measure(), "bare": Measure()}
    sizes: dict[str, Measure] = {"synapse": Measure(), "bare": Measure()}
    to_pending: dict[str, Measure] = {"synapse": Measure(), "bare": Measure()}
    kinds_by_total: dict[str, dict[int, Counter[str]]] = {"synapse": {}, "bare": {}}

    async with harness.stack("turn") as stack:

        async def synapse_turn(i: int) -> float:
            key = stack.key("turn")
            started = time.perf_counter()
            await synapse.send(stack, key, stack.destructive_sql())
            interaction_id = await synapse.wait_pending(stack, key, interval=POLL)
            pending = time.perf_counter() - started
            await synapse.approve(stack, key, interaction_id)
            await synapse.wait_answered(stack, key, interval=POLL)
            elapsed = time.perf_counter() - started
            handle = stack.session(key)
            await wait_event(handle, waits_idle, within=synapse.WAIT_WITHIN, what=f"session {key} idle")
            _count(i, "synapse", pending, *await event_counts(handle))
            return elapsed

        async def bare_turn(i: int) -> float:
            started = time.perf_counter()
            handle, pending = await one_bare_turn(stack)
            elapsed = time.perf_counter() - started
            _count(i, "bare", pending - started, *await event_counts(handle))
            return elapsed

        def _count(i: int, side: str, pending: float, kinds: Counter[str], size: int) -> None:
            if i >= warmup:
                to_pending[side].values.append(pending * 1000)
                events[side].values.append(sum(kinds.values()))
                sizes[side].values.append(size / 1024)
                kinds_by_total[side][sum(kinds.values())] = kinds

        m = await alternate(
            "turn", {"synapse": synapse_turn, "bare": bare_turn}, samples=samples, warmup=warmup
        )

    rows = [
        Row(
            "turn: message → approval → answer",
            "ms",
            m["synapse"],
            m["bare"],
            "a user asks for a destructive change, approves it, reads the answer; bare: signal-with-start "
            "→ activity → update → activity → done. States seen by polling queries every 10 ms",
        ),
        Row(
            "  of which message → approval pending",
            "ms",
            to_pending["synapse"],
            to_pending["bare"],
            "until the approval request can be seen (agent step, assessment, request opened); bare: "
            "until the first activity is done",
        ),
        Row(
            "turn: history events",
            "events",
            events["synapse"],
            events["bare"],
            "history one turn leaves (whole history of a fresh workflow): storage and replay cost",
        ),
        Row(
            "turn: history size",
            "KiB",
            sizes["synapse"],
            sizes["bare"],
            "bytes of those events, payloads included: what the server stores and sends to a worker "
            "that replays the turn",
        ),
    ]
    notes = [
        f"a Synapse turn's events (a median one): {_breakdown(_median(kinds_by_total['synapse'], events['synapse']))}",
        f"a bare turn's events (a median one): {_breakdown(_median(kinds_by_total['bare'], events['bare']))}",
    ]
    return Result(rows=rows, notes=notes)


async def one_bare_turn(stack: Stack) -> tuple[WorkflowHandle[Any, Any], float]:
    """Run one bare turn; its handle and the moment it was waiting for the approval."""
    handle = await stack.client.start_workflow(
        BareTurn.run,
        id=stack.key("bare-turn"),
        task_queue=stack.bare_queue,
        start_signal="message",
        start_signal_args=[stack.destructive_sql()],
    )
    await poll(
        lambda: handle.query(BareTurn.stage),
        lambda stage: stage == "waiting",
        interval=POLL,
        within=synapse.WAIT_WITHIN,
        what="bare turn waiting",
    )
    pending = time.perf_counter()
    await handle.execute_update(BareTurn.approve, "bench")
    await handle.result()
    return handle, pending
