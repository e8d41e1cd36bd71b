"""One run of a graph task (`AgentTaskWorkflow`): its work budget and what it leaves for recall.

`timeout_seconds` counts work only: time spent paused or waiting for a person does not run it
down (the time-skipping server jumps those waits far past the budget), while work split by such
a wait still adds up. A completed run is remembered in the experience index; a failed one is not.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable
from typing import Any

import httpx
from temporalio.client import Client, WorkflowExecutionStatus, WorkflowHandle
from temporalio.testing import WorkflowEnvironment

from contracts import AgentTaskInput, GraphView, SessionControl, TaskReport
from core.agent_registry import BUILTIN_AGENTS
from core.settings import Settings
from worker import build_worker
from workflows.graph import AgentTaskWorkflow
from workflows.identity.ids import graph_workflow_id, task_run_workflow_id

from ...conftest import assert_eventually
from ...decisions import decided
from ...support import replayer
from .flows import by_id, edge, finished, start_graph, statuses, task, wait_view

DELETE_CANCELLED = "DELETE FROM orders WHERE status = 'cancelled'"
BUDGET = 5
"""A task's `timeout_seconds` in these tests: far shorter than the waits for people."""
WAIT_FOR_PERSON = 60
"""Seconds the time-skipping server lets pass while the run is held."""

TaskRunHandle = WorkflowHandle[AgentTaskWorkflow, TaskReport]


async def start_run(
    client: Client, task_queue: str, input_data: dict[str, Any], **extra: Any
) -> TaskRunHandle:
    """Start one task run on its own (its graph does not exist: what it tells the graph is dropped)."""
    graph = graph_workflow_id(str(uuid.uuid4()))
    task_uuid = str(uuid.uuid4())
    run = AgentTaskInput(
        graph_workflow_id=graph,
        task_uuid=task_uuid,
        task_id="job",
        version=1,
        input_data=input_data,
        agent_id="Agent:demo",
        agent=BUILTIN_AGENTS["demo"],
        timeout_seconds=BUDGET,
        **extra,
    )
    handle: TaskRunHandle = await client.start_workflow(
        AgentTaskWorkflow.run, run, id=task_run_workflow_id(graph, task_uuid, 1), task_queue=task_queue
    )
    return handle


async def pending_id(handle: TaskRunHandle) -> str:
    """The interaction the run waits for."""
    pending = await assert_eventually(
        lambda: handle.query(AgentTaskWorkflow.get_pending), bool, what="the run's pending interaction"
    )
    return pending[0].interaction_id


async def closed(handle: WorkflowHandle[Any, Any]) -> Any:
    """The workflow's result once it has closed (polled: awaiting it would let the server skip time).

    Every workflow of a test closes while its worker is up: one left open on the shared
    time-skipping server would hold its clock for the tests after it.
    """
    await assert_eventually(
        handle.describe,
        lambda d: d.status == WorkflowExecutionStatus.COMPLETED,
        within=30,
        what=f"{handle.id} closed",
    )
    return await handle.result()


async def assert_running(handle: TaskRunHandle, status: str) -> None:
    """The run is still open (not timed out), in `status`."""
    assert (await handle.describe()).status == WorkflowExecutionStatus.RUNNING
    assert await handle.query(AgentTaskWorkflow.get_status) == status


async def assert_replays(client: Client, handle: WorkflowHandle[Any, Any]) -> None:
    """The run's history replays against today's code (its work budget is deterministic)."""
    history = await handle.fetch_history()
    result = await replayer(client.data_converter).replay_workflow(history, raise_on_replay_failure=False)
    assert result.replay_failure is None, result.replay_failure


async def assert_clock_free(env: WorkflowEnvironment) -> None:
    """Nothing this test started holds the shared time-skipping server's clock (the tests after it skip time)."""
    async with asyncio.timeout(10):
        await env.sleep(WAIT_FOR_PERSON)


async def test_a_task_does_not_time_out_while_its_tool_approval_waits_for_a_person(
    time_env: WorkflowEnvironment, settings: Settings, count_orders: Callable[[str], int]
) -> None:
    client = time_env.client
    async with build_worker(client, settings):
        handle = await start_graph(
            client,
            settings.temporal.task_queue,
            {
                "new_tasks": [
                    task(
                        "clean", input_data={"sql": DELETE_CANCELLED}, directives={"timeout_seconds": BUDGET}
                    ),
                    task("after"),
                ],
                "new_edges": [edge("clean", "after")],
            },
        )
        waiting = await wait_view(handle, lambda v: bool(v.pending_interactions), what="the tool approval")
        request = waiting.pending_interactions[0]
        await time_env.sleep(WAIT_FOR_PERSON)
        run: TaskRunHandle = client.get_workflow_handle(request.workflow_id)
        await assert_running(run, "waiting_approval")
        view = await wait_view(handle, lambda v: bool(v.pending_interactions), what="the approval still open")
        assert statuses(view)["clean"] not in ("failed", "completed"), by_id(view)["clean"].reason
        outcome = await run.execute_update(
            AgentTaskWorkflow.decide_checked,
            decided(interaction_id=request.interaction_id, approved=True, principal="bob"),
        )
        assert outcome.approved and outcome.tool_result is not None and outcome.tool_result.ok
        done: GraphView = await closed(handle)
        assert statuses(done) == {"clean": "completed", "after": "completed"}, by_id(done)["clean"].reason
        assert "3" in str(by_id(done)["clean"].output)
        await assert_replays(client, run)
        await assert_clock_free(time_env)
    assert count_orders("status = 'cancelled'") == 0


async def test_a_paused_run_does_not_time_out_while_paused(
    time_env: WorkflowEnvironment, settings: Settings
) -> None:
    client = time_env.client
    async with build_worker(client, settings):
        held = await start_run(client, settings.temporal.task_queue, {"echo": "held at start"}, paused=True)
        halted = await start_run(client, settings.temporal.task_queue, {"sql": DELETE_CANCELLED})
        interaction = await pending_id(halted)
        await halted.signal(AgentTaskWorkflow.pause, SessionControl(reason="lunch", principal="olga"))
        await assert_eventually(
            lambda: halted.query(AgentTaskWorkflow.get_status), lambda s: s == "paused", what="run paused"
        )
        await halted.signal(
            AgentTaskWorkflow.decide,
            decided(interaction_id=interaction, approved=True, principal="bob"),
        )
        await assert_eventually(
            lambda: halted.query(AgentTaskWorkflow.get_pending), lambda p: not p, what="the decision taken"
        )
        await time_env.sleep(WAIT_FOR_PERSON)
        await assert_running(held, "paused")
        await assert_running(halted, "paused")  # approved, nobody is asked: only the pause holds it
        for handle in (held, halted):
            await handle.signal(AgentTaskWorkflow.resume, SessionControl(reason="back", principal="olga"))
        started_held: TaskReport = await closed(held)
        after_pause: TaskReport = await closed(halted)
        assert (started_held.status, started_held.output) == ("completed", "held at start")
        assert after_pause.status == "completed", after_pause.error
        assert "3" in str(after_pause.output), "the approved DELETE ran after the resume"
        await assert_replays(client, halted)
        await assert_clock_free(time_env)


# The budget runs out in the middle of an agent step: the run closes and the step's next heartbeat
# learns it was cancelled (should that cross the step's own end, the SDK warns; pyproject.toml
# ignores that warning). On the real dev server: the time-skipping one keeps its clock locked once
# a workflow closes with an activity in flight, which would stall every later test that skips time.
async def test_work_split_by_a_wait_for_a_person_still_adds_up_to_a_timeout(
    client: Client, worker: None, task_queue: str
) -> None:
    # Each agent step sleeps 4 s: the one before the approval and the one after it are 8 s of
    # work, over the 5 s budget, though each alone fits. The second is cut about 1 s in.
    handle = await start_run(client, task_queue, {"sql": DELETE_CANCELLED, "sleep_seconds": 4})
    interaction = await pending_id(handle)
    await assert_running(handle, "waiting_approval")
    await handle.signal(
        AgentTaskWorkflow.decide,
        decided(interaction_id=interaction, approved=True, principal="bob"),
    )
    report: TaskReport = await closed(handle)
    assert report.status == "failed"
    assert report.error == f"timed out after {BUDGET} s of work (timeout_seconds)"
    messages = await handle.query(AgentTaskWorkflow.get_messages)
    assert any(m.role == "tool" for m in messages), "the approved DELETE ran between the two steps"
    await assert_replays(client, handle)


async def test_a_completed_task_is_recalled_from_the_experience_index_and_a_failed_one_is_not(
    client: Client, task_queue: str, http: httpx.AsyncClient
) -> None:
    handle = await start_graph(
        client,
        task_queue,
        {
            "new_tasks": [
                task("survey", input_data={"echo": "the zeppelin hangar holds twelve airships"}),
                task("sabotage", input_data={"fail": "quasar meltdown in the reactor"}),
            ]
        },
    )
    result = await finished(handle)
    assert statuses(result) == {"survey": "completed", "sabotage": "failed"}

    async def recalled(query: str) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = (await http.get("/experience", params={"query": query})).json()
        return found

    matches = await assert_eventually(
        lambda: recalled("zeppelin hangar airships"), bool, what="the task's result indexed"
    )
    assert len(matches) == 1
    best = matches[0]
    assert best["owner_id"] == by_id(result)["survey"].workflow_id, "the run: graph, task and version"
    assert (best["asked_by"], best["agent_id"], best["outcome"], best["turn"]) == (
        handle.id,
        "Agent:demo",
        "answer",
        0,
    )
    assert best["question"] == "task 'survey': " + '{"echo": "the zeppelin hangar holds twelve airships"}'
    assert best["answer"] == "the zeppelin hangar holds twelve airships"
    assert await recalled("quasar meltdown reactor") == [], "a failed run is not remembered"
