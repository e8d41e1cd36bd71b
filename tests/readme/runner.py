"""Running the shell blocks of the README and docs/ the way a reader does: one terminal, blocks in order.

Each section (the blocks under one `##`/`###` heading of a document) runs as one bash script, so
variables a block keeps (`G=$(curl ...)`) reach the next block, as in the reader's terminal, and
each section shows that it sets up its own data. The script stops at the first failing command
(`set -eu`). The documents' addresses are pointed at the test's stack. A prelude wraps `curl` so the test sees
what the reader sees on the screen:

- every answer of 400 or more is a failure, unless the command prints its status itself
  (`-w '%{http_code}'`), as a line that shows a refusal does (its `# →` line checks it), and
- a stream bounded with `--max-time` that runs to its bound (curl's exit status 28) succeeded.

The wrapper reports each status on stderr, after whatever the command's own `-w` prints.
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from .blocks import Block, first_missing

README_PORTS = (8000, 8233, 7233)
"""`make up`'s ports (API, Web UI, Temporal): a block must reach none of them on this machine."""
PRELUDE = r"""set -eu
curl() {
    local status=0 all=" $* " mark='%{stderr}@@readme-http %{http_code}@@\n' format="" args=()
    while [ $# -gt 0 ]; do
        case "$1" in
            -w | --write-out) format=$2; shift 2 ;;
            *) args+=("$1"); shift ;;
        esac
    done
    case "$format" in *"%{http_code}"*) mark='%{stderr}@@readme-http-shown %{http_code}@@\n' ;; esac
    command curl -q "${args[@]}" --write-out "$format$mark" || status=$?
    if [ "$status" = 28 ]; then case "$all" in *" --max-time "*) status=0 ;; esac; fi
    return "$status"
}
"""
BLOCK_MARK = "@@readme-block {}@@"
DONE_MARK = "@@readme-section-done@@"
_BLOCK = re.compile(r"\n?@@readme-block (\d+)@@\n")
_HTTP = re.compile(r"@@readme-http(-shown)? (\d{3})@@\n?")


@dataclass(frozen=True)
class Ports:
    """Where the test's stack listens, instead of the README's ports."""

    api: int
    ui: int


def localize(code: str, ports: Ports) -> str:
    """`code` with the documents' addresses pointed at the test's stack; refuses any other spelling
    of those ports, which would reach a stack running on this machine instead."""
    code = code.replace("127.0.0.1:8000", f"127.0.0.1:{ports.api}").replace(
        "127.0.0.1:8233", f"127.0.0.1:{ports.ui}"
    )
    for port in README_PORTS:
        if re.search(rf":{port}\b", code):
            raise ValueError(f"a block names port {port} other than as 127.0.0.1:{port}:\n{code}")
    return code


def section_script(blocks: Sequence[Block], ports: Ports) -> str:
    """One bash script: the prelude, then each block after a marker that names it."""
    parts = [PRELUDE]
    for number, block in enumerate(blocks):
        parts.append(f"printf '\\n{BLOCK_MARK.format(number)}\\n'\n")
        parts.append(localize(block.code, ports))
    parts.append(f"printf '\\n{DONE_MARK}\\n'\n")
    return "".join(parts)


def reader_env(base: Mapping[str, str]) -> dict[str, str]:
    """The environment of the reader's terminal: this one without Synapse's and Temporal's settings,
    startup files or proxies (which would take 127.0.0.1 elsewhere)."""
    env = {
        name: value
        for name, value in base.items()
        if not name.startswith(("SYNAPSE_", "TEMPORAL_")) and name not in ("BASH_ENV", "ENV", "CDPATH")
    }
    env["NO_PROXY"] = env["no_proxy"] = "127.0.0.1,localhost"
    return env


async def run_section(
    blocks: Sequence[Block], ports: Ports, *, cwd: Path, log: Path, within: float
) -> list[str]:
    """Run one section's blocks in one bash; the problems found, each naming its block (none: all
    ran, exit 0, and printed what the document says)."""
    script = log.with_suffix(".sh")
    await asyncio.to_thread(script.write_text, section_script(blocks, ports))
    with log.open("wb") as out:
        process = await asyncio.create_subprocess_exec(
            "bash",
            "--noprofile",
            "--norc",
            str(script),
            cwd=cwd,
            env=reader_env(os.environ),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=out,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            status: int | None = await asyncio.wait_for(process.wait(), within)
        except TimeoutError:
            os.killpg(process.pid, signal.SIGKILL)
            await process.wait()
            status = None
    output = await asyncio.to_thread(log.read_text, errors="replace")
    return problems(blocks, output, status, within)


def _failed(status: str) -> bool:
    """Whether curl's `%{http_code}` is a failure: no answer (000) or an error status."""
    return status == "000" or int(status) >= 400


def problems(blocks: Sequence[Block], output: str, status: int | None, within: float) -> list[str]:
    """What went wrong in a section's run, from its output and exit status (None: timed out)."""
    found: list[str] = []
    chunks = _BLOCK.split(output)  # text before the first block, then (number, output) pairs
    outputs = {int(chunks[i]): chunks[i + 1] for i in range(1, len(chunks) - 1, 2)}
    finished = DONE_MARK in output
    for number, block in enumerate(blocks):
        if number not in outputs:
            break
        text = outputs[number].replace(DONE_MARK, "")
        shown = _HTTP.sub("", text)
        last = number == max(outputs)
        why: str | None = None
        if last and not finished:
            why = (
                f"did not finish within {within:.0f} s"
                if status is None
                else f"stopped: a command failed with exit status {status}"
            )
        elif failed := [
            code for shown_by_it, code in _HTTP.findall(text) if not shown_by_it and _failed(code)
        ]:
            why = f"curl was answered HTTP {', '.join(failed)}"
        elif missing := first_missing(block.expected, shown):
            why = f"its output lacks `# → {missing}`"
        if why:
            found.append(f"{block.name}: {why}\n--- block ---\n{block.code}--- output ---\n{shown.strip()}\n")
    if not outputs and status != 0:
        found.append(f"the section {blocks[0].section!r} did not start (exit status {status}):\n{output}")
    return found
