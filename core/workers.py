"""Whether a worker serves a task queue: what Temporal knows of the queue's pollers.

`synapse up` waits on it before it says the stack is ready, and the API's `GET /readyz` answers
with it, so nobody sends a first message that would wait in the queue for a worker still starting.
"""

from __future__ import annotations

from temporalio.api.enums.v1 import TaskQueueType
from temporalio.api.taskqueue.v1 import TaskQueue
from temporalio.api.workflowservice.v1 import DescribeTaskQueueRequest
from temporalio.client import Client


async def workflow_pollers(client: Client, task_queue: str) -> int:
    """How many workers polled `task_queue` for workflow tasks recently.

    Temporal lists a poller for a few minutes after its last poll, so a worker that has just
    stopped may still count for that long; one that has not polled yet never does.

    Raises:
        RPCError: Temporal could not be asked.
    """
    response = await client.workflow_service.describe_task_queue(
        DescribeTaskQueueRequest(
            namespace=client.namespace,
            task_queue=TaskQueue(name=task_queue),
            task_queue_type=TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
        )
    )
    return len(response.pollers)
