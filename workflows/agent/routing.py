"""Running a tool: a quick one as a local activity, a worker-bound one (a terminal holding a shell)
on the worker that holds its state, anything else as a regular activity; a failure, or the loss of
the worker holding the state, comes back as a result."""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow
from temporalio.exceptions import ActivityError, TimeoutError, TimeoutType

with workflow.unsafe.imports_passed_through():
    from contracts import (
        ToolAssessment,
        ToolCallRequest,
        ToolResult,
        ToolRun,
        WorkerBinding,
    )
    from contracts.names import RUN_TOOL

from .host import LoopHost
from .options import QUICK_TOOL_TIMEOUT, RUN_TOOL_RETRY, RUN_TOOL_TIMEOUT, WORKER_BOUND_RETRY
from .replies import error_message, raise_if_cancelled

LOST = ""
"""In `worker_queues`: the worker that held the tool's state is gone (the next run starts afresh)."""


async def run_or_lost(run: ToolRun, assessment: ToolAssessment, queue: str | None) -> ToolResult:
    """The tool's result; a failure, or the loss of the worker holding its state, as a result."""
    try:
        return await _run_tool(run, assessment, queue or None)
    except ActivityError as err:
        raise_if_cancelled(err)
        binding = assessment.worker_bound
        if binding is not None and (lost := _lost_how(err, queue)) is not None:
            return _worker_lost(run.call, queue, binding, lost)
        return ToolResult(tool_id=run.call.tool_id, ok=False, error=error_message(err))


def _lost_how(err: ActivityError, queue: str | None) -> str | None:
    """How a worker-bound run lost its worker: `never_started` (nobody took it from the worker's
    queue), `stopped` (its worker stopped heartbeating mid-run), or None (another failure)."""
    cause = err.cause
    if not isinstance(cause, TimeoutError):
        return None
    if cause.type == TimeoutType.SCHEDULE_TO_START and queue:
        return "never_started"
    return "stopped" if cause.type == TimeoutType.HEARTBEAT else None


def _worker_lost(call: ToolCallRequest, queue: str | None, binding: WorkerBinding, how: str) -> ToolResult:
    tool = call.tool_id
    if how == "never_started":
        what = (
            f"the worker holding it did not take this call within {binding.wait_seconds:g} s "
            f"(task queue {queue}), so it has gone; the call did not run"
        )
    else:
        what = (
            f"the worker running this call stopped answering for {binding.heartbeat_seconds:g} s"
            f"{f' (task queue {queue})' if queue else ''}; the call may have been cut short and is not run again"
        )
    return ToolResult(
        tool_id=tool,
        ok=False,
        error=f"{tool} lost: {what}, and the next call starts a fresh {tool}",
        metadata={"worker_lost": True, "worker_queue": queue, "lost": how},
    )


def remember_worker(host: LoopHost, tool_id: str, result: ToolResult) -> None:
    """Where the tool's state now is: the worker that ran it, or `LOST`."""
    bound = result.metadata.get("worker_queue")
    if result.metadata.get("worker_lost"):
        host.worker_queues[tool_id] = LOST
        host.tool_states.pop(tool_id, None)
    elif isinstance(bound, str) and bound:
        host.worker_queues[tool_id] = bound
        host.tool_states[tool_id] = dict(result.metadata)


async def _run_tool(run: ToolRun, assessment: ToolAssessment, queue: str | None) -> ToolResult:
    """Run the tool: a quick one as a local activity, anything else as a regular activity.

    A worker-bound tool (a terminal) heartbeats while it runs, and once a worker holds its
    state its calls go to that worker's own `queue`: waiting longer than the binding's
    `wait_seconds` there means the worker is gone (`_never_started`).

    Measured on a 2-core machine (bench/): approve → SQL applied → acknowledged took ~80 ms
    with a regular activity (an activity task dispatch plus a second workflow task) against
    ~48 ms for a bare update → activity; as a local activity the tool runs inside the workflow
    task that accepted the approval. A crash mid-run is retried when the workflow task times
    out, and the tool's exactly-once claim keeps a destructive statement from applying twice.
    """
    summary = f"tool {assessment.summary}"
    result: ToolResult
    if assessment.quick:
        result = await workflow.execute_local_activity(
            RUN_TOOL,
            run,
            result_type=ToolResult,
            start_to_close_timeout=QUICK_TOOL_TIMEOUT,
            retry_policy=RUN_TOOL_RETRY,
            summary=summary,
        )
    elif assessment.worker_bound is not None:
        binding = assessment.worker_bound
        result = await workflow.execute_activity(
            RUN_TOOL,
            run,
            result_type=ToolResult,
            task_queue=queue,
            schedule_to_start_timeout=timedelta(seconds=binding.wait_seconds) if queue else None,
            start_to_close_timeout=RUN_TOOL_TIMEOUT,
            heartbeat_timeout=timedelta(seconds=binding.heartbeat_seconds),
            retry_policy=WORKER_BOUND_RETRY,
            summary=summary,
        )
    else:
        result = await workflow.execute_activity(
            RUN_TOOL,
            run,
            result_type=ToolResult,
            start_to_close_timeout=RUN_TOOL_TIMEOUT,
            retry_policy=RUN_TOOL_RETRY,
            summary=summary,
        )
    return result
