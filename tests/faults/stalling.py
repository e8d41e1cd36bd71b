"""A workflow whose query holds its worker's thread, as a starved machine does to any workflow.

`python -m tests.faults.stalling QUEUE STALLS [synapse]` runs a worker of it that stalls the
first STALLS queries it answers for 3 s: past the SDK's own 2 s deadlock limit (it interrupts
them, `TMPRL1101`), within Synapse's (`synapse`: `worker.allow_slow_activations`). It runs as a
process of its own because a workflow the SDK interrupted can never be evicted again, so that
worker cannot shut down: the test kills it.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time

from temporalio import workflow
from temporalio.client import Client
from temporalio.worker import UnsandboxedWorkflowRunner, Worker

from worker import allow_slow_activations

STALL_SECONDS = 3.0
"""Past the SDK's 2 s limit, within Synapse's (`worker.DEADLOCK_SECONDS`)."""
STALLS = {"left": 0}
"""How many more queries stall (this process's own count, never the workflow's state)."""


@workflow.defn(sandboxed=False)
class Stalling:
    @workflow.run
    async def run(self) -> None:
        await workflow.wait_condition(lambda: False)

    @workflow.query
    def answer(self) -> str:
        if STALLS["left"] > 0:
            STALLS["left"] -= 1
            time.sleep(STALL_SECONDS)  # no yield, as when the machine gives the thread no CPU
        return "here"


async def serve(queue: str, *, patient: bool) -> None:
    client = await Client.connect(os.environ["TEMPORAL_ADDRESS"], namespace="default")
    worker = Worker(
        client, task_queue=queue, workflows=[Stalling], workflow_runner=UnsandboxedWorkflowRunner()
    )
    if patient:
        allow_slow_activations(worker)
    await worker.run()


if __name__ == "__main__":
    STALLS["left"] = int(sys.argv[2])
    asyncio.run(serve(sys.argv[1], patient=sys.argv[3:] == ["synapse"]))
