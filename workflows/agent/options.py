"""The agent loop's activities: their names, timeouts and retry policies, and the patch ids of
its changes (each a `versioning.patched()` id recorded in running histories: never rename one).

Changing a timeout or a retry policy changes only new schedules; changing a name or a patch id
breaks replay of running workflows."""

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
AGENT_STEP_HEARTBEATS = "agent-step-heartbeats"
"""Change id (`workflows/versioning`): steps are scheduled with `AGENT_STEP_HEARTBEAT`."""
AGENT_STEP_RETRY = RetryPolicy(  # from 1 s, doubling
    maximum_interval=timedelta(seconds=30),
    maximum_attempts=5,
    # Auth and validation failures of a model come back as FAILURE results, not errors.
    non_retryable_error_types=[ErrorType.UNKNOWN_AGENT, ErrorType.INVALID_AGENT_INPUT],
)
QUICK_AGENT_STEPS = "quick-agent-steps"
"""Change id (`workflows/versioning`): a quick agent's step (`quick_step`) runs as a local activity."""
ASSESSED_IN_QUICK_STEP = "assessed-in-quick-step"
"""Change id: a quick step that proposes one tool call assesses it too (`AgentStepInput.assess`),
in place of the gate's `assess_tool_call` local activity in the same workflow task."""
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
LOCAL_TOOL_RUN_PATCH = "quick-tools-run-as-local-activities"
"""Patch id: quick tools became local activities (approval → applied ~35 ms instead of ~80 ms)."""
RUN_TOOL_RETRY = RetryPolicy(
    maximum_interval=timedelta(seconds=30),
    maximum_attempts=5,
    # Tool errors and bad arguments are results (`ok=False`); what raises is worth a retry.
    non_retryable_error_types=[],
)


CANCELLATION_PROPAGATES_PATCH = "loop-cancellation-propagates"
"""Patch id: an activity cancelled because the workflow was cancelled cancels the loop too."""

ASK_USER_PATCH = "ask-user-questions"
"""Patch id: an `ask_user` call is a question to the person (before: an unknown tool)."""
EDITED_CALLS_PATCH = "approve-with-edits"
"""Patch id: an approval's `response_data.arguments` replaces the call's arguments (re-assessed)."""

CANCELLED_RUN_ANSWERED_PATCH = "cancelled-run-answers-its-approver"
"""Patch id: a run cancelled with its turn answers the approval that started it."""


WORKER_BOUND_RETRY = RetryPolicy(maximum_attempts=1)
"""A worker-bound run is never retried: another worker would start it again on another host, and
its own worker, once gone, is gone for good."""
WORKER_BOUND_PATCH = "worker-bound-tools"
"""Patch id: a tool keeping state in its worker runs there, with a heartbeat timeout."""
