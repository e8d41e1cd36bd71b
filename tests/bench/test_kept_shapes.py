"""The bare shapes that keep a session's promises leave the events a Synapse turn leaves: that is
what lets `make bench` say the bytes and CPU between them are Synapse's own."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

from temporalio.client import Client

from bench import many, synapse
from bench.harness import Harness
from bench.history import event_counts
from bench.turn import one_kept_turn


async def test_the_kept_shapes_leave_a_synapse_turns_events(client: Client, tmp_path: Path) -> None:
    server = cast(Any, SimpleNamespace(pid=0, client=client))  # the suite's dev server
    async with Harness(server, tmp_path).stack("kept") as stack:
        key = stack.key("turn")
        await synapse.send(stack, key, stack.destructive_sql())
        await synapse.approve(stack, key, await synapse.seen_pending(stack, key))
        await synapse.seen_over(stack, key)
        turn, turn_bytes = await event_counts(stack.session(key))

        kept_turn, kept_turn_bytes = await event_counts(await one_kept_turn(stack))

        approvals = many._BareKept(stack, 1, queue=stack.bare_queue)
        await approvals.start(1)
        await approvals.approve(1)
        kept_approval, _ = await event_counts(approvals.waiting[0])

    assert sum(turn.values()) == 23, turn
    assert kept_turn == turn  # event by event kind: start, markers, upserts, timers, update, step
    assert kept_approval == turn  # started, pending, approved, answered, idle: a session's turn
    assert turn["upsert_workflow_search_attributes"] == 2 and turn["timer_canceled"] == 1
    assert kept_turn_bytes < turn_bytes  # the bare side's payloads are the small ones
