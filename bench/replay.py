"""`python -m bench.replay`: what an evicted waiting session replays after k turns, and its CPU.

A worker that no longer holds a session in its cache (more sessions wait than it keeps) replays
the session's history before it can take the approval: its whole run, every turn of it. For each
k of `--turns` (1, 5, 20), on one in-memory dev server (the same rig as `python -m bench`):

- **Synapse**: a session (started by the API, as `many` starts them) answers k - 1 turns (an
  INSERT, its approval, the answer) and waits for the k-th turn's approval; its history then
  (events, bytes) and the CPU of replaying it (`temporalio.worker.Replayer` with Synapse's workers'
  runner and converter: the sandbox, the new workflow instance, every activation; this process's
  CPU, median of `--repeats`);
- **continued each turn**: the same, with the session continuing-as-new at every turn's end (its
  `turns_before_continue_as_new` set to 1, the session's own hand-over): what an evicted session
  would replay if sessions continued as new once their history passed a threshold: one run whose
  start carries the state (the conversation so far), and the waiting turn;
- the CPU per turn (this process and the dev server) of the two sessions' k turns, which says
  what a continue-as-new at every turn's end costs;
- **bare**: the bare workflow approved the way a Synapse approval runs (`BareUpdates.answered`,
  as `many`'s answering shape), after k - 1 approvals, with the bare worker's runner (the SDK's
  default sandbox).

The findings are written down in bench/README.md (eighth round).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic_core import to_json
from temporalio.api.enums.v1 import EventType
from temporalio.api.history.v1 import HistoryEvent
from temporalio.client import WorkflowHandle
from temporalio.worker import Replayer

from worker import WORKFLOWS, workflow_runner
from workflows.identity.ids import session_workflow_id
from workflows.session import SessionWorkflow
from workflows.session.state import SessionRunInput
from workflows.session.view import start_search_attributes
from workflows.versioning import GENERATION

from . import bare, synapse
from .harness import Harness, Stack, cpu_seconds
from .history import activity_completed, sets_status, wait_event, waits_idle
from .stats import progress

_TASK_DONE = EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED
_TASK_EVENTS = {
    EventType.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED,
    EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED,
    EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED,
    EventType.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT,
    _TASK_DONE,
}
"""A run is quiet when the last of these in its history is a completed workflow task."""


async def quiet(handle: WorkflowHandle[Any, Any], found: Callable[[HistoryEvent], bool], count: int) -> Any:
    """The run's history once `count` events satisfy `found` and no workflow task is pending, read
    by the server's long-poll on history (bounded by `synapse.WAIT_WITHIN`), so waiting costs
    the server little (a loop of whole-history reads would be most of its CPU)."""
    seen, last_task = 0, None
    try:
        async with asyncio.timeout(synapse.WAIT_WITHIN):
            async for event in handle.fetch_history_events(wait_new_event=True):
                seen += found(event)
                if event.event_type in _TASK_EVENTS:
                    last_task = event.event_type
                if seen >= count and last_task == _TASK_DONE:
                    return await handle.fetch_history()
    except TimeoutError:
        pass
    raise RuntimeError(f"{handle.id}: not quiet after {count} x the awaited event")


def continued(event: HistoryEvent) -> bool:
    return event.event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW


async def replay_cpu(replayer: Replayer, history: Any, repeats: int) -> float:
    """Median CPU milliseconds (this process, all its threads) of replaying `history`."""
    spent = []
    for _ in range(repeats):
        started = time.process_time()
        await replayer.replay_workflow(history)
        spent.append((time.process_time() - started) * 1000)
    return statistics.median(spent)


def _both_cpu(server: int) -> tuple[float, float]:
    return cpu_seconds(), cpu_seconds(server)


def _spent(before: tuple[float, float], after: tuple[float, float], turns: int) -> tuple[float, float]:
    """CPU milliseconds per turn of this process and of the dev server between two readings."""
    return (after[0] - before[0]) * 1000 / turns, (after[1] - before[1]) * 1000 / turns


def size(history: Any) -> tuple[int, float]:
    """Events and KiB of a history."""
    return len(history.events), sum(event.ByteSize() for event in history.events) / 1024


async def synapse_waiting(stack: Stack, turns: list[int]) -> dict[int, Any]:
    """Histories of one session waiting for its k-th approval, for each k of `turns`."""
    key = stack.key("replay")
    handle = stack.session(key)
    found: dict[int, Any] = {}
    for turn in range(1, max(turns) + 1):
        await synapse.send(stack, key, stack.destructive_sql())
        history = await quiet(handle, sets_status("waiting_approval"), turn)
        if turn in turns:
            found[turn] = history
        pending = await handle.query(SessionWorkflow.get_pending)
        await synapse.approve(stack, key, pending[0].interaction_id)
        await quiet(handle, waits_idle, turn)
    return found


async def synapse_continued(stack: Stack, template: Any, turns: list[int]) -> dict[int, Any]:
    """The same, for a session that continues-as-new at every turn's end: its current run's history."""
    (start,) = await stack.synapse_client.data_converter.decode(
        template.events[0].workflow_execution_started_event_attributes.input.payloads, [SessionRunInput]
    )
    key = stack.key("replay-continued")
    config = start.config.model_copy(update={"session_key": key})
    await stack.synapse_client.start_workflow(
        SessionWorkflow.run,
        SessionRunInput(config=config, turns_before_continue_as_new=1, generation=GENERATION),
        id=session_workflow_id(key),
        task_queue=stack.settings.temporal.task_queue,
        search_attributes=start_search_attributes(config),
    )
    found: dict[int, Any] = {}
    for turn in range(1, max(turns) + 1):
        run_id = (await stack.session(key).describe()).run_id
        run = stack.synapse_client.get_workflow_handle(session_workflow_id(key), run_id=run_id)
        await synapse.send(stack, key, stack.destructive_sql())
        history = await quiet(run, sets_status("waiting_approval"), 1)
        if turn in turns:
            found[turn] = history
        pending = await run.query(SessionWorkflow.get_pending)
        await synapse.approve(stack, key, pending[0].interaction_id)
        await quiet_closed(run)
    return found


async def quiet_closed(run: WorkflowHandle[Any, Any]) -> None:
    """Wait until `run` continued as new (bounded)."""
    await wait_event(run, continued, within=synapse.WAIT_WITHIN, what=f"{run.id} continued as new")


async def bare_waiting(stack: Stack, turns: list[int]) -> dict[int, Any]:
    """Histories of one bare answering workflow waiting for its k-th approval, for each k."""
    handle = await stack.client.start_workflow(
        bare.BareUpdates.run,
        id=stack.key("bare-replay"),
        task_queue=stack.bare_queue,
        start_signal="message",
        start_signal_args=["approve this"],
    )
    found: dict[int, Any] = {}
    for turn in range(1, max(turns) + 1):
        history = await quiet(handle, activity_completed, turn - 1)
        if turn in turns:
            found[turn] = history
        await handle.execute_update(bare.BareUpdates.answered, "approve")
    await handle.signal(bare.BareUpdates.stop)
    return found


async def main(args: argparse.Namespace) -> None:
    turns = sorted(set(args.turns))
    with tempfile.TemporaryDirectory(prefix="synapse-replay-") as data_dir:
        async with Harness.start(Path(data_dir)) as harness, harness.stack("replay") as stack:
            progress(f"replay: a session waiting after {turns} turns")
            before = _both_cpu(harness.server_pid)
            plain = await synapse_waiting(stack, turns)
            turn_cpu = {"plain": _spent(before, _both_cpu(harness.server_pid), max(turns))}
            progress("replay: the same, continuing as new at every turn's end")
            before = _both_cpu(harness.server_pid)
            handed = await synapse_continued(stack, plain[turns[0]], turns)
            turn_cpu["continued"] = _spent(before, _both_cpu(harness.server_pid), max(turns))
            progress("replay: the bare answering workflow")
            bare_runs = await bare_waiting(stack, turns)
            converter = stack.synapse_client.data_converter
            replayers = {
                "synapse": Replayer(
                    workflows=list(WORKFLOWS),
                    data_converter=converter,
                    workflow_runner=workflow_runner(converter),
                ),
                "bare": Replayer(workflows=list(bare.WORKFLOWS), data_converter=stack.client.data_converter),
            }
            rows = []
            for k in turns:
                cells = []
                for name, history in (
                    ("synapse", plain[k]),
                    ("synapse", handed[k]),
                    ("bare", bare_runs[k]),
                ):
                    await replayers[name].replay_workflow(history)  # warm: first imports, adapters
                    replayed = await replay_cpu(replayers[name], history, args.repeats)
                    cells.append((*size(history), replayed))
                rows.append((k, cells))
    for name, (process, server) in turn_cpu.items():
        print(f"{name}: {process:.1f} + {server:.1f} ms of CPU per turn (this process + the dev server)")
    for k in turns:
        (start,) = await converter.decode(
            handed[k].events[0].workflow_execution_started_event_attributes.input.payloads, [SessionRunInput]
        )
        parts = {name: len(to_json(getattr(start, name))) for name in ("config", "state", "stream")}
        messages = len(start.state.model_dump_json(include={"messages"})) if start.state else 0
        print(
            f"continued run at k={k}: its start carries {parts} bytes of JSON (the state's messages {messages})"
        )
    print(
        f"\nA waiting session's history and the CPU of replaying it (median of {args.repeats}, this process)"
    )
    print(f"{'k':>3}  {'Synapse':>28}  {'continued each turn':>28}  {'bare answering':>28}")
    for k, cells in rows:
        text = "  ".join(f"{events:4d} ev {kib:6.1f} KiB {cpu:6.1f} ms" for events, kib, cpu in cells)
        print(f"{k:>3}  {text}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="python -m bench.replay", description=__doc__.splitlines()[0])
    parser.add_argument(
        "--turns", type=int, nargs="+", default=[1, 5, 20], help="the k of the k-th turn's approval (1 5 20)"
    )
    parser.add_argument("--repeats", type=int, default=5, help="replays timed per history (5)")
    asyncio.run(main(parser.parse_args()))
    sys.exit(0)
