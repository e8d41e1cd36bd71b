"""A workflow held up for 3 s (a starved machine) is not interrupted by a Synapse worker; one the
SDK's 2 s limit interrupts (`TMPRL1101`) gets a query answered "not answered", saying why."""

from __future__ import annotations

import os
import sys
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client

from api.calls.errors import NotAnswered
from api.calls.workflow import query

from ..conftest import assert_eventually
from .processes import Child, Children, wait_polling
from .stalling import Stalling

WORKFLOW_TASK_COMPLETED = EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED
Started = Callable[..., Awaitable[tuple[Child, str]]]


@pytest.fixture
async def stalling(client: Client, children: Children) -> AsyncIterator[Started]:
    """Starts a stalling worker process and a workflow on it: (the process, the workflow id)."""
    started: list[str] = []

    async def start(*args: str) -> tuple[Child, str]:
        queue = f"stalling-{uuid.uuid4().hex[:8]}"
        env = {k: v for k, v in os.environ.items() if not k.startswith("TEMPORAL_")}
        env.update(TEMPORAL_ADDRESS=client.service_client.config.target_host, PYTHONUNBUFFERED="1")
        argv = [sys.executable, "-m", "tests.faults.stalling", queue, *args]
        process = children.start("stalling", argv, env)
        await wait_polling(client, queue, process)
        handle = await client.start_workflow(Stalling.run, id=queue, task_queue=queue)
        started.append(queue)

        async def first_task_done() -> bool:  # a query before it would ride on (and fail) that task
            events = [event.event_type async for event in handle.fetch_history_events()]
            return WORKFLOW_TASK_COMPLETED in events

        await assert_eventually(first_task_done, bool, within=30, what="the workflow's first task done")
        return process, queue

    yield start
    for workflow_id in started:
        await client.get_workflow_handle(workflow_id).terminate()


async def test_a_synapse_worker_lets_a_slow_workflow_answer(client: Client, stalling: Started) -> None:
    process, workflow_id = await stalling("2", "synapse")

    for _ in range(2):
        assert await query(client, workflow_id, "the stalling workflow", Stalling.answer) == "here"

    assert "TMPRL1101" not in process.output()


async def test_an_interrupted_workflow_is_not_answered_saying_why(client: Client, stalling: Started) -> None:
    process, workflow_id = await stalling("1")

    with pytest.raises(NotAnswered) as raised:
        await query(client, workflow_id, "the stalling workflow", Stalling.answer)

    assert str(raised.value).startswith(
        "the stalling workflow could not answer: its worker interrupted it for running too long"
    )
    assert "TMPRL1101" in str(raised.value) and "restart that worker" in str(raised.value)
    assert "TMPRL1101" in process.output()
