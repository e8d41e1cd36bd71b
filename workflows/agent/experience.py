"""Remembering finished work: each finished turn (or task) goes into the experience index.

The `index_experience` local activity writes it (the workflow does no I/O; a local activity's
input stays out of history); later agents recall it through `experience_config`. Indexing
issues a command (a local activity): changing when it runs is a gated change. A session's turn
that ends in the agent's answer is recorded by the step that answers (`AgentStepInput.remember`),
not by `remember` after it.
"""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError

with workflow.unsafe.imports_passed_through():
    from contracts import ExperienceRecord
    from contracts.names import INDEX_EXPERIENCE

INDEX_TIMEOUT = timedelta(seconds=30)
INDEX_RETRY = RetryPolicy(initial_interval=timedelta(seconds=1), maximum_attempts=5)
"""Recall is a help, not a duty: after five tries the turn is simply not remembered."""


async def remember(record: ExperienceRecord, *, what: str | None = None) -> None:
    """Index one finished turn (or task result); a failure to index never fails the work.

    `what` names it in the Web UI's activity summary and the log (default: `turn <n>`).
    """
    what = what or f"turn {record.turn}"
    try:
        await workflow.execute_local_activity(
            INDEX_EXPERIENCE,
            record,
            start_to_close_timeout=INDEX_TIMEOUT,
            retry_policy=INDEX_RETRY,
            summary=f"remember {what}",
        )
    except ActivityError:
        workflow.logger.warning("%s of %s was not indexed for recall", what, record.owner_id)
