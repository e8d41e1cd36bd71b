"""A read that runs out of time says what kept it: a worker busy with the workflow's task, or no
worker asking for work at all (a stopped worker); a query a worker dropped is asked again. Real dev
server, real workers."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from datetime import timedelta

import pytest
from temporalio import activity, workflow
from temporalio.api.enums.v1 import EventType
from temporalio.api.taskqueue.v1 import TaskQueue
from temporalio.api.workflowservice.v1 import PollWorkflowTaskQueueRequest
from temporalio.client import Client, WorkflowHandle
from temporalio.worker import UnsandboxedWorkflowRunner, Worker

from api.calls.errors import NotAnswered
from api.calls.workflow import query

from ...conftest import assert_eventually

WAIT = timedelta(seconds=2)
LONG_WAIT = timedelta(seconds=30)
"""More than one attempt (`QUERY_ATTEMPT`)."""
RELEASED = asyncio.Event()
"""Lets the held step of this process's worker finish (set at each test's end)."""
HELD = asyncio.Event()
"""Set once the held step runs (its workflow task is then open on the worker)."""


@activity.defn
async def held_step() -> None:
    """A step that runs until the test releases it, holding its workflow task open."""
    HELD.set()
    await RELEASED.wait()


@workflow.defn(sandboxed=False)
class Waiting:
    """Waits for `go`; then runs `held_step` inside its workflow task (a local activity)."""

    def __init__(self) -> None:
        self._go = False

    @workflow.run
    async def run(self) -> None:
        await workflow.wait_condition(lambda: self._go)
        await workflow.execute_local_activity(held_step, start_to_close_timeout=timedelta(minutes=2))
        await workflow.wait_condition(lambda: False)

    @workflow.signal
    def go(self) -> None:
        self._go = True

    @workflow.query
    def answer(self) -> str:
        return "here"


def _worker(client: Client, queue: str) -> Worker:
    return Worker(
        client,
        task_queue=queue,
        workflows=[Waiting],
        activities=[held_step],
        workflow_runner=UnsandboxedWorkflowRunner(),
    )


@pytest.fixture
async def started(client: Client, task_queue: str) -> AsyncIterator[WorkflowHandle[Waiting, None]]:
    """A `Waiting` workflow on the test's queue (no worker yet); terminated at the end."""
    RELEASED.clear()
    HELD.clear()
    handle = await client.start_workflow(
        Waiting.run, id=f"waiting-{uuid.uuid4().hex[:8]}", task_queue=task_queue
    )
    yield handle
    RELEASED.set()
    await handle.terminate()


async def _first_task_done(handle: WorkflowHandle[Waiting, None]) -> None:
    async def done() -> bool:
        events = [event.event_type async for event in handle.fetch_history_events()]
        return EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED in events

    await assert_eventually(done, bool, within=30, what="the workflow's first task done")


async def _unanswered(client: Client, handle: WorkflowHandle[Waiting, None]) -> str:
    with pytest.raises(NotAnswered) as raised:
        await query(client, handle.id, "the workflow", Waiting.answer, wait=WAIT)
    return str(raised.value)


async def test_a_stopped_worker_is_named_as_no_worker_asking_for_work(
    client: Client, task_queue: str, started: WorkflowHandle[Waiting, None]
) -> None:
    async with _worker(client, task_queue):
        await _first_task_done(started)
    await started.signal(Waiting.go)  # a task now waits, and no worker is there to take it

    said = await _unanswered(client, started)

    assert said.startswith("the workflow did not answer within 2 s: its workflow task has waited"), said
    assert f"on task queue {task_queue!r} and no worker has asked that queue for work since" in said
    assert "is `synapse worker` running on its task queue?" in said
    assert "the worker is busy" not in said


async def test_a_busy_worker_is_named_as_busy_not_as_missing(
    client: Client, task_queue: str, started: WorkflowHandle[Waiting, None]
) -> None:
    async with _worker(client, task_queue):
        try:
            await _first_task_done(started)
            await started.signal(Waiting.go)  # its worker now runs a task that does not end soon
            await asyncio.wait_for(HELD.wait(), 30)

            said = await _unanswered(client, started)
        finally:
            RELEASED.set()  # the worker can stop (it waits for the held step)
    assert said.startswith(
        "the workflow did not answer within 2 s: its worker has been running its workflow task"
    ), said
    assert said.endswith("(the read answers after it): the worker is busy, try again shortly"), said
    assert "no worker" not in said and "synapse worker" not in said


async def test_a_query_its_worker_dropped_is_asked_again_within_the_wait(
    client: Client, task_queue: str, started: WorkflowHandle[Waiting, None]
) -> None:
    """A worker can drop a query that reaches it while it takes the workflow out of its cache, and
    Temporal then waits for that answer until the caller gives up. Here a poller takes the query
    and says nothing (as such a worker does); the read asks again and the next worker answers."""
    async with Worker(
        client,
        task_queue=task_queue,
        workflows=[Waiting],
        activities=[held_step],
        workflow_runner=UnsandboxedWorkflowRunner(),
        max_cached_workflows=0,  # no sticky queue: the query goes to the task queue's pollers
    ):
        await _first_task_done(started)
    dropper = asyncio.create_task(
        client.workflow_service.poll_workflow_task_queue(
            PollWorkflowTaskQueueRequest(
                namespace=client.namespace, task_queue=TaskQueue(name=task_queue), identity="drops queries"
            ),
            timeout=timedelta(seconds=60),
        )
    )
    answer = asyncio.create_task(query(client, started.id, "the workflow", Waiting.answer, wait=LONG_WAIT))

    dropped = await asyncio.wait_for(dropper, 60)
    assert dropped.HasField("query"), "the poller took the query"
    assert not answer.done(), "the query waits for the answer it will never get"
    async with _worker(client, task_queue):
        assert await answer == "here"
