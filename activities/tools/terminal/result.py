"""What a command's outcome tells the agent (the tool result), the stream (the final chunk) and
people (a large result's preview, a sentence about it)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from contracts import ArtifactRef, ToolResult

from ..plugin import cut
from .chunks import TerminalChunk, complete_chunk, error_chunk
from .shell import CommandOutcome

TOOL_ID = "terminal"
OUTPUT_CHARS = 1_000_000
"""Output kept in the result (as text); a result larger than `inline_bytes` is stored as an artifact
by the runner, and history, the stream and the agent carry its `preview`."""
RAW_BYTES = 2_000_000
"""Raw output (escape sequences included) a command may produce before the rest is dropped."""


LOST_CHILD = re.compile(r"^bash: line \d+: wait_for: No record of process \d+\r?\n", re.MULTILINE)
"""bash's own warning, not the command's output: inside a sandbox's PID namespace, after a command
that left a background job, bash (5.2) now and then loses a child it forked and says so on its
error output, which is the command's (1 run in 40 of `sleep 30 & echo started`). Dropped from the
result; what streamed live may have shown it."""


def refusal(command: str, error: str, **metadata: Any) -> ToolResult:
    """A command that did not run, and why (with the terminal's `cwd` and `waiting_for_input` when
    there is one: the workflow learns from every result where the terminal is)."""
    return ToolResult(tool_id=TOOL_ID, ok=False, error=error, metadata={"command": command, **metadata})


@dataclass(frozen=True)
class Limits:
    """The time limits a command ran under (named in the result when one stopped it)."""

    total_seconds: float
    idle_seconds: float


def command_result(
    command: str, outcome: CommandOutcome, limits: Limits, sandbox: str, **metadata: Any
) -> ToolResult:
    """The outcome for the agent: all of the output (the runner stores a large one as an artifact)."""
    text = LOST_CHILD.sub("", outcome.output) if sandbox != "none" else outcome.output
    note = None
    if len(text) > OUTPUT_CHARS or outcome.truncated_bytes:
        note = (
            f"output cut: {len(text):,} characters kept as {min(len(text), OUTPUT_CHARS):,}; "
            f"{outcome.truncated_bytes:,} raw bytes past the {RAW_BYTES:,}-byte limit not kept"
        )
        text = cut(text, OUTPUT_CHARS)
    interrupted = {
        "inactivity": f"no output for {limits.idle_seconds:.0f} s (waiting for input?): interrupted with Ctrl-C",
        "timeout": f"still running after {limits.total_seconds:.0f} s: interrupted with Ctrl-C",
        "cancelled": "cancelled: interrupted with Ctrl-C",
    }.get(outcome.interrupted or "")
    waiting = {"waiting_for_input": outcome.prompt} if outcome.prompt is not None else {}
    return ToolResult(
        tool_id=TOOL_ID,
        ok=outcome.success,
        content={"output": text, "exit_status": outcome.exit_status, "cwd": outcome.cwd, **waiting},
        error=interrupted or (None if outcome.success else f"exit status {outcome.exit_status}"),
        metadata={
            "command": command,
            "exit_status": outcome.exit_status,
            "command_success": outcome.success,
            "execution_time": outcome.execution_time,
            "cwd": outcome.cwd,
            "terminal_type": outcome.terminal_type,
            "sandbox": sandbox,
            "waiting_for_input": outcome.prompt,
            **({"truncated": note} if note else {}),
            **metadata,
        },
    )


def sandbox_failed(result: ToolResult, outcome: CommandOutcome) -> None:
    """The sandbox did not run the command (bwrap refused, a folder is missing): say so plainly."""
    said = [line for line in outcome.output.splitlines() if line.startswith("bwrap: ")]
    reason = said[-1] if said else f"bwrap ended with exit status {outcome.exit_status}"
    result.ok = False
    result.error = f"the sandbox did not run the command: {reason}"
    result.metadata.update(sandbox_failed=True, command_success=False)


def final_chunk(result: ToolResult, outcome: CommandOutcome) -> TerminalChunk:
    """`complete` with the exit status, time and sandbox, or `error` when the command was interrupted
    (or its sandbox did not start)."""
    if outcome.interrupted is not None:
        return error_chunk(result.error or outcome.interrupted, outcome.interrupted, outcome.terminal_type)
    if result.metadata.get("sandbox_failed"):
        return error_chunk(result.error or "the sandbox did not start", "sandbox", outcome.terminal_type)
    if outcome.prompt is not None:
        summary = f"waiting for input at {outcome.prompt!r} after {outcome.execution_time:.1f} s"
    else:
        summary = f"exit status {outcome.exit_status} after {outcome.execution_time:.1f} s"
    chunk = complete_chunk(
        summary,
        execution_time=outcome.execution_time,
        success=outcome.success,
        exit_status=outcome.exit_status,
        terminal_type=outcome.terminal_type,
    )
    chunk.metadata["sandbox"] = result.metadata.get("sandbox")
    return chunk


def output_preview(content: dict[str, Any], budget: int, ref: ArtifactRef) -> dict[str, Any]:
    """The output's beginning and end (errors are often last), naming the artifact with all of it."""
    output: str = content["output"]
    half = max(budget // 4, 200)
    shown = f"{output[:half]}\n[... {len(output):,} characters in all: artifact {ref.artifact_id} ...]\n{output[-half:]}"
    return {**content, "output": shown}


def describe_output(content: dict[str, Any]) -> str:
    """`exit status 0:` and the output."""
    return f"exit status {content.get('exit_status')}:\n{cut(str(content['output']), 1500)}"
