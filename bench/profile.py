"""`python -m bench.profile`: where a turn's history events and bytes go, and a session start's CPU.

Prints, on one in-memory dev server (the same rig as `python -m bench`):

1. One Synapse turn (message with an INSERT → approval pending → approved → answered, a fresh
   session) event by event: its kind, its bytes as stored, and what it is (the activity, the
   search attributes set, the marker); then the same for the bare turn it is compared with.
2. `--sessions` session starts (each until its approval is pending, seen by the server's
   long-poll on history; `--concurrency` at once) under cProfile: the CPU per start of this process (worker, API, client) and of the dev server,
   and the functions that took most of this process's time (in the event loop's thread and the
   worker threads, timed in each thread's CPU); `--approvals`: then their approvals, the same way
   (`--cache N` below `--sessions`: approvals of sessions the worker no longer holds).

The findings are written down in bench/README.md.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import functools
import io
import pstats
import sys
import tempfile
import threading
import time
from concurrent.futures.thread import _WorkItem
from pathlib import Path
from typing import Any, Self

from temporalio.api.enums.v1 import EventType
from temporalio.api.history.v1 import HistoryEvent
from temporalio.client import WorkflowHandle
from temporalio.converter import decode_typed_search_attributes

from . import synapse
from .harness import Harness, Stack, cpu_seconds
from .stats import bounded
from .turn import one_bare_turn

POLL = 0.01


def describe(event: HistoryEvent) -> str:
    """What one event is, in a few words."""
    kind = event.event_type
    if kind == EventType.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES:
        fields = event.upsert_workflow_search_attributes_event_attributes.search_attributes
        return ", ".join(f"{key.name}={value}" for key, value in decode_typed_search_attributes(fields))
    if kind == EventType.EVENT_TYPE_MARKER_RECORDED:
        marker = event.marker_recorded_event_attributes
        patch = marker.details.get("patch-data")
        return f"patch {patch.payloads[0].data.decode()}" if patch else marker.marker_name
    if kind == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
        return event.activity_task_scheduled_event_attributes.activity_type.name
    if kind == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED:
        return event.workflow_execution_signaled_event_attributes.signal_name
    if kind == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED:
        return event.workflow_execution_update_accepted_event_attributes.accepted_request.input.name
    if kind == EventType.EVENT_TYPE_TIMER_STARTED:
        return f"{event.timer_started_event_attributes.start_to_fire_timeout.seconds} s"
    return ""


async def print_history(title: str, handle: WorkflowHandle[Any, Any]) -> None:
    history = await handle.fetch_history()
    print(f"\n{title}: {len(history.events)} events, {sum(e.ByteSize() for e in history.events)} bytes")
    print(f"{'#':>3} {'bytes':>6}  event")
    for event in history.events:
        name = EventType.Name(event.event_type).removeprefix("EVENT_TYPE_").lower()
        print(f"{event.event_id:>3} {event.ByteSize():>6}  {name} {describe(event)}".rstrip())


async def one_turn(stack: Stack) -> None:
    key = stack.key("profile")
    await synapse.send(stack, key, stack.destructive_sql())
    await synapse.approve(stack, key, await synapse.seen_pending(stack, key))
    await synapse.seen_over(stack, key)  # read as `make bench` reads it: no query during the turn
    await print_history("Synapse turn", stack.session(key))
    handle, _ = await one_bare_turn(stack)
    await print_history("bare turn", handle)


async def _start(stack: Stack, started: list[str]) -> float:
    key = stack.key("start")
    await synapse.send(stack, key, stack.destructive_sql())
    # by the server's long-poll on history, as `many` waits: polling a query would profile the
    # query's activations
    await synapse.seen_waiting(stack, key)
    started.append(key)
    return 0.0


async def _approve(stack: Stack, key: str, interaction_id: str) -> float:
    await synapse.approve(stack, key, interaction_id)
    await synapse.seen_over(stack, key)  # the turn is over: an approval's whole cost
    return 0.0


class _ThreadProfiles:
    """cProfile in the worker threads too, while entered: every work item a thread pool runs (the
    SDK's workflow activations, `asyncio.to_thread`'s calls) is profiled in a profile of its
    thread's own; cProfile alone sees only the thread that enabled it (the event loop's)."""

    def __init__(self) -> None:
        self.profiles: list[cProfile.Profile] = []
        self._local = threading.local()
        self._run = _WorkItem.run

    def _profile(self) -> cProfile.Profile:
        profile: cProfile.Profile | None = getattr(self._local, "profile", None)
        if profile is None:
            profile = self._local.profile = cProfile.Profile(time.thread_time)
            self.profiles.append(profile)
        return profile

    def __enter__(self) -> Self:
        run, profile_of = self._run, self._profile

        def profiled_run(item: _WorkItem[Any]) -> None:
            profile = profile_of()
            profile.enable()
            try:
                run(item)
            finally:
                profile.disable()

        _WorkItem.run = profiled_run  # type: ignore[method-assign,assignment]
        return self

    def __exit__(self, *_: object) -> None:
        _WorkItem.run = self._run  # type: ignore[method-assign]


async def profiled(
    what: str, count: int, server_pid: int, run: Any, top: int, sort: str, dump: Path | None = None
) -> None:
    """`run()` under cProfile, in the event loop's thread and the thread pools' (times are each
    thread's CPU, not the wall clock's); CPU per item in this process and the dev server, the top
    functions (and the whole profile written to `dump`, for `pstats`)."""
    profile = cProfile.Profile(time.thread_time)
    process, server = cpu_seconds(), cpu_seconds(server_pid)
    with _ThreadProfiles() as threads:
        profile.enable()
        try:
            await run()
        finally:
            profile.disable()
    process, server = cpu_seconds() - process, cpu_seconds(server_pid) - server
    print(
        f"\n{count} {what}: CPU per one {process * 1000 / count:.1f} ms in this process (worker, API, "
        f"client, profiler), {server * 1000 / count:.1f} ms in the dev server"
    )
    out = io.StringIO()
    stats = pstats.Stats(profile, *threads.profiles, stream=out)
    stats.sort_stats(sort).print_stats(top)
    print(out.getvalue())
    if dump is not None:
        stats.dump_stats(dump)
        print(f"profile written to {dump}")


async def starts(stack: Stack, server_pid: int, args: argparse.Namespace) -> None:
    count, concurrency, keys = args.sessions, args.concurrency, list[str]()
    await bounded(concurrency, [lambda: _start(stack, []) for _ in range(min(count, 20))])  # warm up

    async def start_all() -> None:
        await bounded(concurrency, [lambda: _start(stack, keys) for _ in range(count)])

    await profiled("session starts until pending", count, server_pid, start_all, args.top, args.sort)
    if args.approvals:
        pending = [await synapse.wait_pending(stack, key, interval=POLL) for key in keys]

        async def approve_all() -> None:
            jobs = [functools.partial(_approve, stack, key, i) for key, i in zip(keys, pending, strict=True)]
            await bounded(concurrency, jobs)

        await profiled(
            "approvals until the turn is over", count, server_pid, approve_all, args.top, args.sort, args.dump
        )


async def main(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory(prefix="synapse-profile-") as data_dir:
        async with (
            Harness.start(Path(data_dir), args.cache) as harness,
            harness.stack("profile") as stack,
        ):
            await one_turn(stack)
            await starts(stack, harness.server_pid, args)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="python -m bench.profile", description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=200, help="session starts profiled (200)")
    parser.add_argument("--concurrency", type=int, default=20, help="starts in flight (20)")
    parser.add_argument(
        "--approvals", action="store_true", help="then approve them all, under the profiler too"
    )
    parser.add_argument(
        "--cache",
        type=int,
        metavar="N",
        help="workflows the worker keeps in its cache (default: SYNAPSE_CACHED_WORKFLOWS, else 1000); "
        "below --sessions, most approvals replay their session first (an evicted session's approval)",
    )
    parser.add_argument(
        "--dump", type=Path, metavar="FILE", help="write the approvals' whole profile to FILE (pstats)"
    )
    parser.add_argument("--top", type=int, default=30, help="functions listed (30)")
    parser.add_argument(
        "--sort",
        choices=["tottime", "cumulative"],
        default="tottime",
        help="order of the functions (tottime)",
    )
    asyncio.run(main(parser.parse_args()))
    sys.exit(0)
