"""Driving graphs in tests: start one from a blueprint, wait for a state, read its tasks."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from temporalio.client import Client, WorkflowHandle

from contracts import (
    GraphConfig,
    GraphIntervention,
    GraphQuery,
    GraphTask,
    GraphView,
    PlanBlueprint,
    TaskView,
)
from workflows.graph import TaskGraphWorkflow
from workflows.graph.state import GRAPH_TASK_TIMEOUT, GraphRunInput
from workflows.identity.ids import graph_workflow_id

from ...conftest import assert_eventually
from ...decisions import decided

GraphHandle = WorkflowHandle[TaskGraphWorkflow, GraphView]


def task(task_id: str, **extra: Any) -> dict[str, Any]:
    """A blueprint task for `Agent:demo` (it echoes `input_data`, or follows its rules)."""
    extra.setdefault("input_data", {"echo": task_id})
    return {"task_id": task_id, "assignee_id": "Agent:demo", **extra}


def edge(source: str, target: str, **extra: Any) -> dict[str, Any]:
    """A blueprint edge."""
    return {"source_task_id": source, "target_task_id": target, **extra}


async def start_graph(
    client: Client, task_queue: str, blueprint: dict[str, Any], *, cas_after: int | None = None, **config: Any
) -> GraphHandle:
    """Start a graph on `task_queue` (its worker must run there)."""
    graph_id = str(uuid.uuid4())
    run = GraphRunInput(
        config=GraphConfig(graph_id=graph_id, requested_by="alice", **config),
        blueprint=PlanBlueprint.model_validate(blueprint),
    )
    if cas_after is not None:
        run.continue_as_new_after_events = cas_after
    handle: GraphHandle = await client.start_workflow(
        TaskGraphWorkflow.run,
        run,
        id=graph_workflow_id(graph_id),
        task_queue=task_queue,
        task_timeout=GRAPH_TASK_TIMEOUT,  # as the API starts graphs
    )
    return handle


async def task_timeout(client: Client, workflow_id: str, run_id: str | None = None) -> timedelta:
    """The workflow task timeout a run of `workflow_id` was given (the latest run by default)."""
    described = await client.get_workflow_handle(workflow_id, run_id=run_id).describe()
    return described.raw_description.execution_config.default_workflow_task_timeout.ToTimedelta()


async def view_of(handle: GraphHandle, limit: int = 1000) -> GraphView:
    """The graph's state (every task up to `limit`)."""
    found: GraphView = await handle.query(TaskGraphWorkflow.get_state, GraphQuery(limit=limit))
    return found


async def wait_view(
    handle: GraphHandle, check: Callable[[GraphView], bool], *, within: float = 60, what: str = "graph state"
) -> GraphView:
    """Poll the graph until `check` holds."""
    return await assert_eventually(lambda: view_of(handle), check, within=within, interval=0.1, what=what)


def by_id(view: GraphView) -> dict[str, TaskView]:
    """The view's tasks by blueprint id."""
    return {t.task_id: t for t in view.tasks}


def statuses(view: GraphView) -> dict[str, str]:
    """Each task's status by blueprint id."""
    return {t.task_id: t.status.value for t in view.tasks}


async def task_of(handle: GraphHandle, view: GraphView, task_id: str) -> GraphTask:
    """One task with its versions."""
    found = await handle.query(TaskGraphWorkflow.get_task, by_id(view)[task_id].task_uuid)
    assert found is not None
    return found


async def finished(handle: GraphHandle, *, within: float = 60) -> GraphView:
    """The graph's result (its view when it closed), or a failure after `within` seconds."""
    try:
        async with asyncio.timeout(within):
            return await handle.result()
    except TimeoutError:
        view = await view_of(handle)
        raise AssertionError(f"graph not finished in {within}s: {statuses(view)}") from None


def gated(task_id: str, **gate: object) -> dict[str, object]:
    """A blueprint task behind a human gate (`human_interaction`)."""
    return task(task_id, directives={"human_interaction": {"prompt": f"Run {task_id}?", **gate}})


def intervention(view: GraphView, task_id: str, kind: str, **extra: Any) -> GraphIntervention:
    """An intervention on one task of the view, by olga."""
    return GraphIntervention(
        intervention_type=kind,
        target_task_uuid=by_id(view)[task_id].task_uuid,
        comment=f"{kind.lower()} {task_id}",
        principal="olga",
        **extra,
    )


async def decide_gate(handle: GraphHandle, view: GraphView, task_id: str, approved: bool = True) -> None:
    """bob decides the gate of one task of the view."""
    request = next(r for r in view.pending_interactions if r.content["task_id"] == task_id)  # type: ignore[index]
    await handle.execute_update(
        TaskGraphWorkflow.decide_checked,
        decided(interaction_id=request.interaction_id, approved=approved, principal="bob"),
    )
