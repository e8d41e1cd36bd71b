"""The agent loop's activities: their timeouts and retry policies, and how it chooses them.

Changing a timeout or a retry policy changes only new schedules; changing whether a step or a
tool runs as a local activity or an activity changes the commands issued, which is a gated change
(`workflows/versioning`)."""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy

with workflow.unsafe.imports_passed_through():
    from contracts import ErrorType


AGENT_STEP_TIMEOUT = timedelta(minutes=10)
"""A model call (several, with the adapter's own retries) fits in this."""
AGENT_STEP_HEARTBEAT = timedelta(seconds=30)
"""The step heartbeats while it runs (`activities/heartbeats.py`): a worker that dies mid-step is
noticed after this, not after `AGENT_STEP_TIMEOUT`, and the step runs again on another worker."""
AGENT_STEP_RETRY = RetryPolicy(  # from 1 s, doubling
    maximum_interval=timedelta(seconds=30),
    maximum_attempts=5,
    # Auth and validation failures of a model come back as FAILURE results, not errors.
    non_retryable_error_types=[ErrorType.UNKNOWN_AGENT, ErrorType.INVALID_AGENT_INPUT],
)
QUICK_FRAMEWORKS = frozenset({"demo"})
"""Frameworks that decide in the worker without a model call: a step takes microseconds, so it runs
as a local activity (one history event instead of six, no activity task round trip), as quick tools
do. A model-backed step (seconds, retried, heartbeating) stays an activity."""
QUICK_BUILTIN = "Agent:demo"
"""The builtin agent a step without a declaration runs that is quick (the offline demo rules)."""
QUICK_STEP_TIMEOUT = timedelta(seconds=30)
"""A quick step that takes this long is retried (its workflow task is kept alive meanwhile)."""
ASSESS_TIMEOUT = timedelta(seconds=10)
"""Assessment is a policy lookup and a SQL parse: milliseconds."""
ASSESS_RETRY = RetryPolicy(maximum_attempts=3)
RUN_TOOL_TIMEOUT = timedelta(minutes=5)
QUICK_TOOL_TIMEOUT = timedelta(seconds=30)
"""A quick tool (SQL: ~2 ms) that takes this long is retried; its claim makes the retry safe."""
RUN_TOOL_RETRY = RetryPolicy(
    maximum_interval=timedelta(seconds=30),
    maximum_attempts=5,
    # Tool errors and bad arguments are results (`ok=False`); what raises is worth a retry.
    non_retryable_error_types=[],
)


WORKER_BOUND_RETRY = RetryPolicy(maximum_attempts=1)
"""A worker-bound run is never retried: another worker would start it again on another host, and
its own worker, once gone, is gone for good."""
