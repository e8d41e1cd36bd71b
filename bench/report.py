"""The machine header and the results table, as text for the terminal and as Markdown."""

from __future__ import annotations

import os
import platform
import subprocess
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib.metadata import version
from pathlib import Path

from .stats import Row

HEADERS = ("measure", "Synapse p50", "p99", "bare p50", "p99", "ratio p50", "means")


@dataclass
class RunInfo:
    """What the table was measured on and how."""

    mode: str
    samples: int
    warmup: int
    sessions: int
    concurrency: int
    rounds: int = 1
    load_before: str = ""
    cache: int | None = None
    """Every worker's workflow cache (`--cache`), when set."""

    def header(self) -> list[str]:
        """Lines above the table."""
        return [
            f"Synapse benchmarks, {self.mode} run, {datetime.now(UTC):%Y-%m-%d %H:%M} UTC: "
            f"{self.samples} samples per measure after {self.warmup} warm-up rounds, "
            f"{self.sessions} sessions at concurrency {self.concurrency} for 'many'"
            + (f" (in {self.rounds} rounds per side)" if self.rounds > 1 else "")
            + (f"; every worker caches {self.cache} workflows" if self.cache is not None else ""),
            f"machine: {machine()}; load average before the run {self.load_before or 'unknown'}"
            + (" (busy: other work competed for the CPUs)" if _busy(self.load_before) else ""),
            "setup: one in-memory Temporal dev server (its own process); Synapse's worker, the API "
            "(uvicorn on 127.0.0.1; the timed messages and approvals sent as plain HTTP/1.1, the "
            "rest with httpx), a bare worker and the benchmark client share "
            "one Python process; Synapse and bare samples alternate; compiled modules are cached "
            "(in the run's temp dir), as in any deployment after its first import",
        ]


def load_average() -> str:
    """The 1-minute load average now (from /proc/loadavg), as text; empty when unknown."""
    path = Path("/proc/loadavg")
    return path.read_text().split()[0] if path.exists() else ""


def _busy(load: str) -> bool:
    try:
        return float(load) > 0.5
    except ValueError:
        return False


def machine() -> str:
    """CPU count and model, Python, Temporal CLI and SDK versions."""
    model = "unknown CPU"
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for line in cpuinfo.read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    try:
        from .devserver import temporal_binary

        cli = subprocess.run(
            [temporal_binary(), "--version"], capture_output=True, text=True, timeout=10, check=False
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError, SystemExit):
        cli = "temporal CLI unknown"
    return (
        f"nproc {os.cpu_count()}, {model}, Python {platform.python_version()}, {cli}, "
        f"temporalio {version('temporalio')}"
    )


def _number(value: float | None, unit: str) -> str:
    if value is None:
        return "—"
    if unit in ("events", "sessions/s") or abs(value) >= 100:
        text = f"{value:.0f}"
    elif abs(value) >= 10:
        text = f"{value:.1f}"
    else:
        text = f"{value:.2f}"
    return f"{text} {unit}"


def cells(row: Row) -> list[str]:
    """The row's cells, formatted."""
    ratio = row.ratio
    return [
        row.name,
        _number(row.synapse.p50 if row.synapse else None, row.unit),
        _number(row.synapse.p99 if row.synapse else None, row.unit),
        _number(row.bare.p50 if row.bare else None, row.unit),
        _number(row.bare.p99 if row.bare else None, row.unit),
        f"{ratio:.2f}x" if ratio is not None else "—",
        row.means,
    ]


def text_table(rows: list[Row]) -> str:
    """An aligned plain-text table."""
    table = [list(HEADERS), *(cells(row) for row in rows)]
    widths = [max(len(line[i]) for line in table) for i in range(len(HEADERS) - 1)]
    lines = []
    for n, line in enumerate(table):
        numbers = [line[0].ljust(widths[0]), *(line[i].rjust(widths[i]) for i in range(1, len(widths)))]
        lines.append("  ".join([*numbers, line[-1]]))
        if n == 0:
            lines.append("  ".join("-" * w for w in widths) + "  " + "-" * 5)
    return "\n".join(lines)


def markdown_table(rows: list[Row]) -> str:
    """A Markdown table (for the README's Performance section)."""
    lines = ["| " + " | ".join(HEADERS) + " |", "|" + "---|" + "---:|" * 5 + "---|"]
    for row in rows:
        name, *rest = (cell.replace("|", "\\|") for cell in cells(row))
        name = "↳ " + name.strip() if name.startswith("  ") else name  # a part of the row above
        lines.append("| " + " | ".join([name, *rest]) + " |")
    return "\n".join(lines)


LEGEND = (
    "ratio p50 = Synapse p50 / bare p50 (above 1: Synapse is slower, or for a rate, faster); "
    "bare = the same Temporal primitives with no Synapse code and activities that return at once; "
    "indented rows are parts of, or alternatives to, the row above; with few samples p99 is about the maximum"
)


def render(info: RunInfo, rows: list[Row], notes: list[str], *, markdown: bool) -> str:
    """Header, table and notes."""
    notes = [LEGEND, *notes]
    if markdown:
        header = "\n".join(f"- {line}" for line in info.header())
        body = "\n".join(f"- {note}" for note in notes)
        return f"{header}\n\n{markdown_table(rows)}\n\n{body}\n"
    rule = "=" * 100
    body = "\n".join(f"* {note}" for note in notes)
    return f"{rule}\n" + "\n".join(info.header()) + f"\n{rule}\n{text_table(rows)}\n\n{body}\n"
