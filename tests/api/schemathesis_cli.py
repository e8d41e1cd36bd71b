"""The `schemathesis` CLI against the live app: the contract test's short run, `make fuzz`'s long ones.

Every run applies every check (`--checks all`: no 5xx, no undocumented status, bodies and headers
as documented, data accepted or refused as the schema says, auth enforced as documented) to the
app's own `/openapi.json`, with the settings of `schemathesis.toml` at the repository root (or a
file built on it).
"""

from __future__ import annotations

import asyncio
import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / "schemathesis.toml"

EXCLUDED_PATHS = "/events$"
"""An event stream of a workflow that exists stays open until the workflow closes (days): each such
case would only wait for the request timeout. The streams' statuses are tested directly
(tests/api/test_sessions.py, test_graphs.py, test_many_watchers.py)."""


@dataclass(frozen=True)
class Run:
    """What one `schemathesis run` did: its exit status and its report."""

    seed: int
    returncode: int
    report: str

    @property
    def cases(self) -> int:
        """Test cases generated (the report's "N generated"); 0 when it says none."""
        found = re.search(r"(\d+) generated", self.report)
        return int(found.group(1)) if found else 0

    @property
    def failures(self) -> int:
        """Unique failures found (the report's "found N unique failures")."""
        found = re.search(r"found (\d+) unique failures?", self.report)
        return int(found.group(1)) if found else 0

    @property
    def passed(self) -> bool:
        """Exit status 0, cases run, and no failure reported."""
        return self.returncode == 0 and self.cases > 0 and self.failures == 0


async def run_schemathesis(
    base_url: str,
    *,
    phases: str,
    examples: int,
    seed: int,
    key: str | None = None,
    config: Path = CONFIG,
    cwd: Path = ROOT,
) -> Run:
    """Run `schemathesis run` on `base_url`'s OpenAPI document; `key` is sent as a bearer token.

    One worker: with two threads, hypothesis' `ast.parse` calls can meet CPython 3.11's "AST
    constructor recursion depth mismatch" (SystemError), which failed a CI run. Cancelled (a
    caller's `asyncio.timeout`), it kills the CLI.
    """
    argv = [
        str(Path(sys.executable).parent / "schemathesis"),
        "--config-file",
        str(config),
        "run",
        f"{base_url}/openapi.json",
        "--checks",
        "all",
        "--max-examples",
        str(examples),
        "--phases",
        phases,
        "--exclude-path-regex",
        EXCLUDED_PATHS,
        "--request-timeout",
        "20",
        "--workers",
        "1",
        "--seed",
        str(seed),
        "--no-color",
        *(["-H", f"Authorization: Bearer {key}"] if key else []),
    ]
    process = await asyncio.create_subprocess_exec(
        *argv, cwd=cwd, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT
    )
    try:
        output, _ = await process.communicate()
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    assert process.returncode is not None
    return Run(seed=seed, returncode=process.returncode, report=output.decode(errors="replace"))
