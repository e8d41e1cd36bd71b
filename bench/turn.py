"""Turn cost: one agent turn with one approved tool call, wall time and history events.

Synapse (timed from the message): `POST /sessions/{key}/messages` with an INSERT to a fresh
session → its approval pending → `POST .../interactions/{id}` approving → the agent's answer in
the conversation and the turn over (the session's idle timer started). Bare, alternating:
signal-with-start → "agent" activity → wait for the approval update → "tool" activity → the
update replies → the workflow completes. States are seen by the server's long-poll on history
(both sides alike), so reading them adds nothing to the turn: a query polled while the turn's
local activities run would cost it a workflow task more (`synapse.py`). Events: the whole
history of the fresh session once its turn is over vs the bare workflow's whole history.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from typing import Any

from temporalio.api.enums.v1 import EventType
from temporalio.api.history.v1 import HistoryEvent
from temporalio.client import WorkflowHandle

from . import synapse
from .bare import BareKept, BareTurn
from .harness import Harness, Stack
from .history import event_counts, wait_event, waits_idle
from .kept import kept_pending
from .stats import Measure, Result, Row, alternate


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
            interaction_id = await synapse.seen_pending(stack, key)
            pending = time.perf_counter() - started
            await synapse.approve(stack, key, interaction_id)
            await synapse.seen_over(stack, key)
            elapsed = time.perf_counter() - started
            _count(i, "synapse", pending, *await event_counts(stack.session(key)))
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
        kept_kinds, kept_size = await event_counts(await one_kept_turn(stack))

    rows = [
        Row(
            "turn: message → approval → answer",
            "ms",
            m["synapse"],
            m["bare"],
            "a user asks for a destructive change, approves it, reads the answer; bare: signal-with-start "
            "→ activity → update → activity → done. States seen by the server's long-poll on history",
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
        Row(
            "↳ history events, against a bare turn that answers and keeps the promises",
            "events",
            events["synapse"],
            Measure([sum(kept_kinds.values())]),
            "bare: a turn of a Synapse turn's steps and commands (the agent and the tool as local "
            "activities, a session's search attributes at its start, the status upserted as the request "
            "opens and as it is decided, the request's timer started and cancelled, an answering activity "
            "given the conversation: message, call, result; the idle timer), with the bare side's payloads",
        ),
        Row(
            "↳ history size, against a bare turn that answers and keeps the promises",
            "KiB",
            sizes["synapse"],
            Measure([kept_size / 1024]),
            "the same turn's bytes: what is left is Synapse's own payloads (the session's config, "
            "the call's assessment, the conversation as the agent step reads it, the audit's fields)",
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
    await wait_event(handle, _after_first_activity(), within=synapse.WAIT_WITHIN, what="bare turn waiting")
    pending = time.perf_counter()
    await handle.execute_update(BareTurn.approve, "bench")
    await handle.result()
    return handle, pending


async def one_kept_turn(stack: Stack) -> WorkflowHandle[Any, Any]:
    """Run one bare turn that keeps the promises (`BareKept`) until it waits idle; its handle."""
    handle = await kept_pending(stack, "bare-turn-kept", stack.destructive_sql())
    await handle.execute_update(BareKept.answered, "bench")
    await wait_event(handle, waits_idle, within=synapse.WAIT_WITHIN, what="kept turn idle")
    return handle


def _after_first_activity() -> Callable[[HistoryEvent], bool]:
    """The workflow task that follows the first activity's completion: the bare turn now waits."""
    done = False

    def found(event: HistoryEvent) -> bool:
        nonlocal done
        if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
            done = True
        return done and event.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED

    return found
