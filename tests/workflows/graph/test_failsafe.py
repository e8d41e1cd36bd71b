"""Nothing a handler meets can fail the graph or wedge it: an intervention, a plan or a blueprint
whose assignee cannot be looked up (the worker's `resolve_agents` fails) is refused or fails
alone, audited, and the graph goes on to the end."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from temporalio.client import Client, WorkflowUpdateFailedError
from temporalio.exceptions import ApplicationError

from activities.agents.directory import AgentDirectory
from contracts import AgentSpec, AuditKind, BlueprintChange, GraphStatus, PlanBlueprint
from core.settings import Settings
from worker import build_worker
from workflows.graph import TaskGraphWorkflow

from ...conftest import assert_eventually
from .flows import (
    GraphHandle,
    by_id,
    decide_gate,
    edge,
    finished,
    gated,
    intervention,
    start_graph,
    task,
    wait_view,
)

BROKEN = "Agent:broken"


class BrokenLookups:
    """The worker's agent registry, except that looking up `Agent:broken` fails (not 'unknown':
    the lookup itself breaks, as a bug or a lost declarations store would)."""

    def __init__(self, registry: Any) -> None:
        self._registry = registry

    def resolve(self, assignee_id: str, key: str = "") -> AgentSpec:
        if assignee_id == BROKEN:
            raise ApplicationError("the agents store is unreachable", non_retryable=True)
        spec: AgentSpec = self._registry.resolve(assignee_id, key)
        return spec


@pytest.fixture
async def worker(client: Client, settings: Settings) -> AsyncIterator[None]:
    directory = AgentDirectory(settings)
    directory.registry = BrokenLookups(directory.registry)  # type: ignore[assignment]
    async with build_worker(client, settings, directory=directory):
        yield


async def waiting_at_second(client: Client, task_queue: str) -> GraphHandle:
    """A graph whose `first` completed and whose `second` waits at its gate."""
    handle = await start_graph(
        client,
        task_queue,
        {"new_tasks": [task("first"), gated("second")], "new_edges": [edge("first", "second")]},
    )
    await wait_view(handle, lambda v: by_id(v)["second"].status == "waiting", what="second at its gate")
    return handle


async def audited(handle: GraphHandle, kind: AuditKind) -> list[str]:
    entries = await assert_eventually(
        lambda: handle.query(TaskGraphWorkflow.get_audit),
        lambda found: any(e.kind == kind for e in found),
        what=f"a {kind} audit entry",
    )
    return [e.comment or "" for e in entries if e.kind == kind]


async def test_a_signalled_rollback_whose_assignee_lookup_fails_is_audited_and_the_graph_goes_on(
    client: Client, worker: None, task_queue: str
) -> None:
    handle = await waiting_at_second(client, task_queue)
    view = await wait_view(handle, lambda v: True)
    await handle.signal(
        TaskGraphWorkflow.intervene,
        intervention(view, "first", "ROLLBACK_AND_MODIFY", new_assignee_id=BROKEN),
    )
    comments = await audited(handle, AuditKind.REJECTED)
    assert comments == ["ROLLBACK_AND_MODIFY: the agents store is unreachable"]
    now = await wait_view(handle, lambda v: True)
    assert now.status == GraphStatus.RUNNING
    assert by_id(now)["first"].version == 1, "nothing was rolled back"
    await decide_gate(handle, now, "second")
    result = await finished(handle)
    assert result.status == GraphStatus.COMPLETED, result


async def test_a_blueprint_whose_assignee_lookup_fails_fails_its_update_and_the_graph_goes_on(
    client: Client, worker: None, task_queue: str
) -> None:
    handle = await waiting_at_second(client, task_queue)
    change = BlueprintChange(
        blueprint=PlanBlueprint.model_validate({"new_tasks": [task("third", assignee_id=BROKEN)]}),
        principal="olga",
    )
    with pytest.raises(WorkflowUpdateFailedError) as failed:
        await handle.execute_update(TaskGraphWorkflow.extend, change)
    assert str(failed.value.cause) == "the agents store is unreachable"
    view = await wait_view(handle, lambda v: True)
    assert [t.task_id for t in view.tasks] == ["first", "second"], "nothing was added"
    await decide_gate(handle, view, "second")
    assert (await finished(handle)).status == GraphStatus.COMPLETED


async def test_an_agents_plan_whose_assignee_lookup_fails_is_refused_on_its_task_and_the_graph_goes_on(
    client: Client, worker: None, task_queue: str
) -> None:
    plan = {"new_tasks": [{"task_id": "more", "assignee_id": BROKEN, "input_data": {}}]}
    handle = await start_graph(
        client,
        task_queue,
        {
            "new_tasks": [task("planner", input_data={"plan": plan}), task("after")],
            "new_edges": [edge("planner", "after")],
        },
    )
    result = await finished(handle)
    assert result.status == GraphStatus.COMPLETED, result
    tasks = by_id(result)
    assert sorted(tasks) == ["after", "planner"], "the plan added nothing"
    assert tasks["planner"].reason == "its plan was refused: the agents store is unreachable"
    assert await audited(handle, AuditKind.PLAN_REFUSED) == ["the agents store is unreachable"]
