"""Approval latency: HTTP approve → destructive SQL applied → response, vs bare update shapes.

Per Synapse sample (setup untimed): a fresh session whose message is an INSERT with a fresh id,
waited for until its approval is pending. Timed: `POST /sessions/{key}/interactions/{id}` with
`{"approved": true}` until its 200, whose body carries the applied tool result (rowcount 1); the
same decision by a client `execute_update` (no API) is timed too. After each, untimed, the agent's
answer is waited for, so no session works in the background while the next sample is timed.
Bare samples, alternating with them: `execute_update` on a waiting workflow whose handler does
nothing (the floor), runs one activity, or runs one local activity; and the decision of a waiting
request of the bare shape that keeps a session's promises (`bare.BareKept`, one per sample: its
timer cancelled, its status upserted, the tool a local activity). The SQL tool alone is timed as
well, to show the SQLite part.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from typing import Any

from temporalio.client import WorkflowHandle

from activities.tools.sql.database import SqlDatabase
from contracts import Decision, DecisionSource, Role, Verdict
from workflows.session import SessionWorkflow

from . import synapse
from .bare import BareKept, BareUpdates
from .harness import Harness, Stack
from .history import wait_event, waits_idle
from .kept import kept_pending
from .stats import Measure, Result, Row, alternate, poll

SETUP_POLL = 0.01
"""Seconds between `get_pending` queries while a sample's session gets ready (untimed)."""
ROTATE_EVERY = 100
"""Rounds after which the bare workflow is replaced, so its history stays short."""


async def _bare_workflow(stack: Stack) -> WorkflowHandle[Any, Any]:
    handle = await stack.client.start_workflow(
        BareUpdates.run, id=stack.key("bare-approval"), task_queue=stack.bare_queue
    )
    await poll(
        lambda: handle.query(BareUpdates.ready), bool, interval=SETUP_POLL, within=30, what="bare ready"
    )
    return handle


async def run(harness: Harness, *, samples: int, warmup: int) -> Result:
    """Measure and return the approval rows."""
    async with harness.stack("approval") as stack:
        sql_tool = SqlDatabase(stack.settings.demo_db_url)
        bare: list[WorkflowHandle[Any, Any]] = []

        async def synapse_approve(_i: int) -> float:
            key = stack.key("approve")
            await synapse.send(stack, key, stack.destructive_sql())
            interaction_id = await synapse.wait_pending(stack, key, interval=SETUP_POLL)
            started = time.perf_counter()
            await synapse.approve(stack, key, interaction_id)
            elapsed = time.perf_counter() - started
            await synapse.wait_answered(stack, key, interval=SETUP_POLL)  # quiet before the next step
            return elapsed

        async def synapse_update(_i: int) -> float:
            key = stack.key("approve-direct")
            await synapse.send(stack, key, stack.destructive_sql())
            interaction_id = await synapse.wait_pending(stack, key, interval=SETUP_POLL)
            decision = Decision(
                interaction_id=interaction_id,
                principal="bench",
                role=Role.approver,
                channel="http",
                source=DecisionSource.HTTP,
                said=Verdict(approved=True),
            )
            started = time.perf_counter()
            outcome = await stack.session(key).execute_update(SessionWorkflow.decide_checked, decision)
            elapsed = time.perf_counter() - started
            if outcome.tool_result is None or not outcome.tool_result.ok:
                raise RuntimeError(f"approving {key}/{interaction_id} by update did not apply it: {outcome}")
            await synapse.wait_answered(stack, key, interval=SETUP_POLL)  # quiet before the next step
            return elapsed

        async def bare_update(update: Any) -> float:
            handle = bare[-1]
            started = time.perf_counter()
            await handle.execute_update(update, "approve")
            return time.perf_counter() - started

        async def bare_activity(i: int) -> float:
            if i % ROTATE_EVERY == 0:
                bare.append(await _bare_workflow(stack))
            return await bare_update(BareUpdates.with_activity)

        async def bare_kept(_i: int) -> float:
            handle = await kept_pending(stack, "bare-kept-approval", stack.destructive_sql())
            started = time.perf_counter()
            await handle.execute_update(BareKept.answered, "approve")
            elapsed = time.perf_counter() - started
            await wait_event(
                handle, waits_idle, within=synapse.WAIT_WITHIN, what=f"{handle.id} idle"
            )  # quiet
            await handle.signal(BareKept.stop)
            return elapsed

        async def sql_alone(_i: int) -> float:
            sql, interaction = stack.destructive_sql(), f"bench-{uuid.uuid4().hex[:10]}"
            started = time.perf_counter()
            result = await asyncio.to_thread(sql_tool.run, sql, interaction)
            elapsed = time.perf_counter() - started
            if not result.ok:
                raise RuntimeError(f"the sql tool failed on {sql!r}: {result.error}")
            return elapsed

        m = await alternate(
            "approval",
            {
                "synapse": synapse_approve,
                "direct": synapse_update,
                "activity": bare_activity,
                "floor": lambda _i: bare_update(BareUpdates.noop),
                "local": lambda _i: bare_update(BareUpdates.with_local_activity),
                "kept": bare_kept,
                "sql": sql_alone,
            },
            samples=samples,
            warmup=warmup,
        )
        sql_tool.close()
        for handle in bare:
            await handle.signal(BareUpdates.stop)
    return Result(rows=_rows(m))


def _times(synapse_p50: float | None, bare: Measure) -> str:
    if synapse_p50 is None or not bare.p50:
        return ""
    return f"; Synapse approve = {synapse_p50 / bare.p50:.1f}x this"


def _rows(m: dict[str, Measure]) -> list[Row]:
    approve = m["synapse"].p50
    return [
        Row(
            "approve → SQL applied → response",
            "ms",
            m["synapse"],
            m["activity"],
            "an approver's click until the answer with the SQL result is back; bare: update → "
            "activity → reply",
        ),
        Row(
            "  the same decision without HTTP",
            "ms",
            m["direct"],
            m["local"],
            "the same by a Temporal client update (no API); bare: update → local activity → reply. "
            "The gap to the row above is the API's cost",
        ),
        Row(
            "  bare update → local activity → reply",
            "ms",
            None,
            m["local"],
            "the least a tool run as a local activity costs" + _times(approve, m["local"]),
        ),
        Row(
            "  bare update keeping the promises → local activity → reply",
            "ms",
            None,
            m["kept"],
            "the same, deciding a waiting request of the bare shape that keeps a session's promises "
            "(its timer cancelled, its status upserted: `bare.BareKept`)" + _times(approve, m["kept"]),
        ),
        Row(
            "  bare update round trip (floor)",
            "ms",
            None,
            m["floor"],
            "no decision can be answered faster (handler does nothing)" + _times(approve, m["floor"]),
        ),
        Row(
            "  sql tool alone (INSERT + claim)",
            "ms",
            m["sql"],
            None,
            "the SQLite part of an approval (statement + exactly-once claim, in a thread)",
        ),
    ]
