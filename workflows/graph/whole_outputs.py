"""Reading offloaded answers back whole, before the rules need them.

An answer past the inline limit is kept in the artifact store; the state holds its preview.
Before each step the workflow reads the outputs an edge or a loop still needs (`Outputs.needed`)
with the `read_output` local activity, so conditions, data flow and loops see the whole value,
never the preview. One that cannot be read fails its task, naming why; never the graph.
"""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError

with workflow.unsafe.imports_passed_through():
    from contracts.names import READ_OUTPUT

    from .state import GraphState

from .rules import Progress, Scheduler

READ_TIMEOUT = timedelta(seconds=30)
READ_RETRY = RetryPolicy(maximum_attempts=5)


async def read_whole(scheduler: Scheduler, state: GraphState, progress: Progress) -> None:
    """Read the whole outputs the next step needs; what failed goes into `progress` (tasks whose
    output is unreadable)."""
    for key, ref in scheduler.outputs.needed():
        try:
            scheduler.outputs.whole[key] = await workflow.execute_local_activity(
                READ_OUTPUT,
                ref,
                start_to_close_timeout=READ_TIMEOUT,
                retry_policy=READ_RETRY,
                summary=f"read output {ref.artifact_id}",
            )
        except ActivityError as err:
            task = state.tasks[key.split(":v", 1)[0]]
            scheduler.outcomes.fail(task, f"its whole output could not be read: {err.cause or err}", progress)
