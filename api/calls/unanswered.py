"""Why a workflow did not answer a read in time, in words that say what is actually busy.

A query waits for the workflow's pending workflow task: Temporal answers it with (or after) that
task. When the time runs out, two things tell the cases apart (`describe()` of the workflow and
of its task queue's pollers):
- its task is running on a worker (`STARTED`): that worker is busy with it;
- its task waits (`SCHEDULED`) and a worker has asked the task queue for work since it was
  scheduled: the worker is alive and busy with other tasks (e.g. a wide fan-out's task runs
  starting); the read will answer once the task is taken;
- its task waits and no worker has asked for work since: its workers are stopped, or all stuck;
- nothing waits: the query itself went unanswered (a worker that stopped some seconds ago).
If the look itself fails, the plain "no worker" words are kept.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from temporalio.api.enums.v1 import PendingWorkflowTaskState, TaskQueueType
from temporalio.api.taskqueue.v1 import TaskQueue
from temporalio.api.workflowservice.v1 import DescribeTaskQueueRequest
from temporalio.client import Client
from temporalio.service import RPCError

LOOK_WAIT = timedelta(seconds=2)
"""How long each look at the workflow and its task queue may take (the caller already waited)."""
NO_WORKER = "no worker is serving it right now (is `synapse worker` running on its task queue?)"
BUSY = "(the read answers after it): the worker is busy, try again shortly"


async def why_unanswered(client: Client, workflow_id: str) -> str:
    """What kept the workflow from answering: its worker busy with its task or with others, or
    no worker asking for work (`NO_WORKER` when Temporal cannot tell)."""
    try:
        description = await client.get_workflow_handle(workflow_id).describe(rpc_timeout=LOOK_WAIT)
        queue = description.task_queue
        pending = description.raw_description.pending_workflow_task
        has_pending = description.raw_description.HasField("pending_workflow_task")
        last_poll = await _last_poll(client, queue)
    except RPCError:
        return NO_WORKER
    now = datetime.now(UTC)
    if has_pending and pending.state == PendingWorkflowTaskState.PENDING_WORKFLOW_TASK_STATE_STARTED:
        running = _seconds(now, pending.started_time.ToDatetime(UTC))
        return f"its worker has been running its workflow task for {running:.0f} s {BUSY}"
    seen = (
        "no worker polled it lately"
        if last_poll is None
        else f"a worker last polled it {_seconds(now, last_poll):.0f} s ago"
    )
    if has_pending:
        scheduled = pending.scheduled_time.ToDatetime(UTC)
        waited = f"its workflow task has waited {_seconds(now, scheduled):.0f} s on task queue {queue!r}"
        if last_poll is not None and last_poll >= scheduled:
            return f"{waited} while its worker took other tasks {BUSY}"
        return (
            f"{waited} and no worker has asked that queue for work since ({seen}): its workers are "
            "stopped or all busy (is `synapse worker` running on its task queue?)"
        )
    return f"{NO_WORKER}; on task queue {queue!r} {seen}"


async def _last_poll(client: Client, queue: str) -> datetime | None:
    """When a worker last asked `queue` for a workflow task (Temporal keeps this some minutes)."""
    described = await client.workflow_service.describe_task_queue(
        DescribeTaskQueueRequest(
            namespace=client.namespace,
            task_queue=TaskQueue(name=queue),
            task_queue_type=TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
        ),
        timeout=LOOK_WAIT,
    )
    polls = [poller.last_access_time.ToDatetime(UTC) for poller in described.pollers]
    return max(polls, default=None)


def _seconds(now: datetime, then: datetime) -> float:
    return max(0.0, (now - then).total_seconds())
