"""`make fuzz` (`python -m tests.api.fuzz`): schemathesis at length against the live app.

For each app (API keys off, then on): seed realistic data, then run schemathesis with every check
and a new random seed per run until the app has had `--cases` test cases. The first run of each
includes the coverage phase (every parameter's boundaries, every route's statuses); later runs
fuzz and follow links (stateful). It stops at the first run that finds anything, prints the
report and keeps everything it wrote; the exit status is 0 only when nothing was found.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..schemathesis_cli import CONFIG, Run, run_schemathesis
from .seed import config, seed
from .stack import KEY, fuzzed_stack

FIRST_PHASES = "examples,coverage,fuzzing,stateful"
LATER_PHASES = "fuzzing,stateful"


@dataclass
class Tally:
    """The runs against one app."""

    label: str
    runs: list[Run] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def cases(self) -> int:
        return sum(run.cases for run in self.runs)

    @property
    def passed(self) -> bool:
        return bool(self.runs) and all(run.passed for run in self.runs)


def say(text: str) -> None:
    print(f"fuzz: {text}", flush=True)


async def fuzz_app(label: str, base_url: str, key: str | None, args: argparse.Namespace, work: Path) -> Tally:
    """Seed, then run schemathesis on one app until it has had `args.cases` cases or found something."""
    known = await seed(base_url, api_key=key)
    say(f"{label}: seeded " + ", ".join(f"{len(values)} {name}" for name, values in known.items()))
    settings = config(known, CONFIG, work / f"schemathesis-{label.replace(' ', '-')}.toml")
    tally = Tally(label)
    rng = random.Random(args.seed)
    while tally.cases < args.cases:
        run_seed = rng.randrange(2**31)
        started = time.monotonic()
        run = await run_schemathesis(
            base_url,
            phases=LATER_PHASES if tally.runs else FIRST_PHASES,
            examples=args.examples,
            seed=run_seed,
            key=key,
            config=settings,
            cwd=work,
        )
        elapsed = time.monotonic() - started
        tally.runs.append(run)
        tally.seconds += elapsed
        (work / f"report-{label.replace(' ', '-')}-{run_seed}.txt").write_text(run.report)
        say(
            f"{label}: seed {run_seed}: {run.cases:,} cases, {run.failures} failures in {elapsed:.0f} s"
            f" ({tally.cases:,} of {args.cases:,})"
        )
        if not run.passed:
            print(run.report[-20000:], flush=True)
            break
    return tally


async def main(args: argparse.Namespace) -> int:
    work = Path(tempfile.mkdtemp(prefix="synapse-fuzz-"))
    tallies: list[Tally] = []
    async with fuzzed_stack(work / "state") as stack:
        say(f"stack up: {stack.open_url} (API keys off), {stack.keyed_url} (API keys on)")
        for label, url, key in (("keys off", stack.open_url, None), ("keys on", stack.keyed_url, KEY)):
            tallies.append(await fuzz_app(label, url, key, args, work))
            if not tallies[-1].passed:
                break
    print()
    print("| app | runs | cases | failures | seconds |")
    print("|---|---:|---:|---:|---:|")
    for tally in tallies:
        failures = sum(run.failures or (not run.passed) for run in tally.runs)
        print(f"| {tally.label} | {len(tally.runs)} | {tally.cases:,} | {failures} | {tally.seconds:.0f} |")
    if len(tallies) == 2 and all(tally.passed for tally in tallies):
        if args.keep:
            say(f"the reports are in {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
        say("nothing found: no server error, no undocumented status, every check passed")
        return 0
    say(f"FOUND something: every run's report and the stack's data are in {work}")
    return 1


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="make fuzz", description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=10_000, help="test cases per app (default 10,000)")
    parser.add_argument(
        "--examples", type=int, default=150, help="examples per operation and phase in one run (default 150)"
    )
    parser.add_argument(
        "--seed", type=int, default=None, help="seed of the runs' seeds (default: random, printed per run)"
    )
    parser.add_argument("--keep", action="store_true", help="keep the reports when nothing was found")
    return parser.parse_args(argv)


if __name__ == "__main__":
    sys.exit(asyncio.run(main(parse(sys.argv[1:]))))
