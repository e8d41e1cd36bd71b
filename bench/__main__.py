"""`python -m bench [--quick]`: run the benchmarks and print one table (see bench/__init__.py)."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import shutil
import signal
import sys
import tempfile
import time
import traceback
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import NoReturn

from . import approval, graph, many, reads, stream, terminal, turn
from .harness import Harness
from .report import RunInfo, load_average, render
from .stats import Result, Row, progress

BENCHMARKS: dict[str, Callable[[Harness, argparse.Namespace], Awaitable[Result]]] = {
    "approval": lambda h, a: approval.run(h, samples=a.samples, warmup=a.warmup),
    "turn": lambda h, a: turn.run(h, samples=a.samples, warmup=a.warmup),
    "stream": lambda h, a: stream.run(
        h, samples=a.samples, warmup=a.warmup, idle_window=10 if a.quick else 60
    ),
    "many": lambda h, a: many.run(
        h, sessions=a.sessions, concurrency=a.concurrency, warmup=a.warmup, rounds=a.rounds
    ),
    "graph": lambda h, a: graph.run(h, tasks=a.graph_tasks, samples=1 if a.quick else 3),
    "terminal": lambda h, a: terminal.run(h, samples=a.samples, warmup=a.warmup),
    "reads": lambda h, a: reads.run(h, tasks=a.reads_tasks, samples=1 if a.quick else 2),
}


def parse(argv: list[str]) -> argparse.Namespace:
    """Command-line options; `--quick` changes the defaults of the others."""
    parser = argparse.ArgumentParser(
        prog="python -m bench",
        description="Synapse paths vs the bare-Temporal shapes they stand on, measured in the same run.",
    )
    parser.add_argument(
        "--quick", action="store_true", help="small run (< 1 minute): 20 samples, 50 sessions"
    )
    parser.add_argument("--samples", type=int, help="samples per latency measure (default 200, quick 20)")
    parser.add_argument("--warmup", type=int, help="warm-up rounds per benchmark (default 10, quick 3)")
    parser.add_argument("--sessions", type=int, help="sessions for 'many' (default 1000, quick 50)")
    parser.add_argument("--concurrency", type=int, default=20, help="requests in flight for 'many' (20)")
    parser.add_argument(
        "--rounds",
        type=int,
        help="batches per side for 'many', the sides taking turns (default 4, quick 2; 1: each side at once)",
    )
    parser.add_argument(
        "--cache",
        type=int,
        metavar="N",
        help="workflows every worker keeps in its cache, Synapse's and the bare ones alike (default: "
        "SYNAPSE_CACHED_WORKFLOWS for Synapse's, the SDK's 1000 for the bare ones); small, N < "
        "--sessions: nearly every approval of 'many' replays its workflow first, as at 10,000",
    )
    parser.add_argument(
        "--graph-tasks", type=int, help="tasks of the 'graph' fan-out (default 500, quick 50)"
    )
    parser.add_argument(
        "--reads-tasks",
        type=int,
        help="tasks of the fan-out whose status is read during it, 'reads' (default 500, quick 20)",
    )
    parser.add_argument(
        "--only", default=",".join(BENCHMARKS), help=f"comma-separated subset of {','.join(BENCHMARKS)}"
    )
    parser.add_argument("--markdown", type=Path, metavar="FILE", help="also write the table as Markdown")
    parser.add_argument(
        "--timeout", type=float, help="seconds the whole run may take (default 1800, quick 120)"
    )
    args = parser.parse_args(argv)
    quick = args.quick
    args.samples = args.samples or (20 if quick else 200)
    args.warmup = args.warmup if args.warmup is not None else (3 if quick else 10)
    args.sessions = args.sessions or (50 if quick else 1000)
    args.rounds = args.rounds if args.rounds is not None else (2 if quick else 4)
    args.graph_tasks = args.graph_tasks or (50 if quick else 500)
    args.reads_tasks = args.reads_tasks or (20 if quick else 500)
    args.timeout = args.timeout or (120.0 if quick else 1800.0)
    args.only = [name.strip() for name in args.only.split(",") if name.strip()]
    unknown = [name for name in args.only if name not in BENCHMARKS]
    if unknown:
        parser.error(f"unknown benchmark(s) {', '.join(unknown)}; choose from {', '.join(BENCHMARKS)}")
    if args.samples < 2 or args.sessions < 1 or args.concurrency < 1 or args.rounds < 1:
        parser.error("--samples must be at least 2, --sessions, --concurrency and --rounds at least 1")
    if args.cache is not None and args.cache < 0:
        parser.error("--cache must be at least 0")
    return args


async def run(args: argparse.Namespace, data_dir: Path) -> tuple[list[Row], list[str]]:
    """Start the dev server once, run the chosen benchmarks in order, stop everything."""
    rows: list[Row] = []
    notes: list[str] = []
    _stop_on_signals(data_dir)
    deadline = asyncio.timeout(args.timeout)
    try:
        async with deadline, Harness.start(data_dir, args.cache) as harness:
            for name in args.only:
                started = time.monotonic()
                result = await BENCHMARKS[name](harness, args)
                progress(f"{name}: done in {time.monotonic() - started:.1f} s")
                rows += result.rows
                notes += result.notes
    except Exception as err:
        if deadline.expired():  # the cancellation may surface as another error (e.g. an update's)
            raise TimeoutError from None
        if isinstance(err, TimeoutError):  # a bounded wait inside a benchmark, not --timeout
            raise RuntimeError("a benchmark step timed out (see the traceback)") from err
        raise
    return rows, notes


def _cache_bytecode(directory: Path) -> None:
    """Keep compiled modules (in `directory`), as any deployment does after its first import.

    The workflow sandbox re-imports the workflow modules for every new workflow run; where
    PYTHONDONTWRITEBYTECODE is set (and no __pycache__ exists) it would compile them every time,
    and the numbers would depend on the state of the work tree.
    """
    sys.pycache_prefix = str(directory)
    sys.dont_write_bytecode = False


def _stop_on_signals(scratch: Path) -> None:
    """Ctrl-C or SIGTERM: stop everything in order (workers, API, then the server); twice: exit now."""
    main_task = asyncio.current_task()
    if main_task is None:
        return
    received = 0

    def stop() -> None:
        nonlocal received
        received += 1
        if received > 1:
            _exit_now(130, "second stop signal: exiting at once", scratch)
        progress("stopping (send the signal again to exit at once)")
        main_task.cancel()

    for sig in (signal.SIGINT, signal.SIGTERM):
        asyncio.get_running_loop().add_signal_handler(sig, stop)


def _exit_now(code: int, why: str, scratch: Path) -> NoReturn:
    """Leave without the interpreter's exit: Temporal's core can wait forever there for a worker
    that a failure or interruption left half-stopped. The dev server gets SIGTERM when we go."""
    shutil.rmtree(scratch, ignore_errors=True)
    progress(why)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def main(argv: list[str] | None = None) -> int:
    """Run, print the table to stdout, optionally write it as Markdown."""
    args = parse(sys.argv[1:] if argv is None else argv)
    logging.basicConfig(level=logging.ERROR, format="%(levelname)s %(name)s: %(message)s")
    info = RunInfo(
        mode="quick" if args.quick else "full",
        samples=args.samples,
        warmup=args.warmup,
        sessions=args.sessions,
        concurrency=args.concurrency,
        rounds=args.rounds if "many" in args.only else 1,
        cache=args.cache,
        load_before=load_average(),
    )
    started = time.monotonic()
    scratch = Path(tempfile.mkdtemp(prefix="synapse-bench-"))
    _cache_bytecode(scratch / "pycache")
    try:
        rows, notes = asyncio.run(run(args, scratch))
    except (KeyboardInterrupt, asyncio.CancelledError):
        _exit_now(130, "interrupted; stopped", scratch)
    except TimeoutError:
        _exit_now(1, f"the run did not finish within --timeout {args.timeout:.0f} s; stopped", scratch)
    except Exception:
        traceback.print_exc()
        _exit_now(1, "a benchmark failed (above); stopped", scratch)
    shutil.rmtree(scratch, ignore_errors=True)
    notes.append(f"whole run: {time.monotonic() - started:.1f} s")
    print(render(info, rows, notes, markdown=False))
    if args.markdown:
        args.markdown.write_text(render(info, rows, notes, markdown=True))
        progress(f"Markdown table written to {args.markdown}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
