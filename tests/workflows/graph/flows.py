"""Driving graphs in tests: start one from a blueprint, wait for a state, read its tasks."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

from temporalio.client import Client, WorkflowHandle

from contracts import GraphConfig, GraphQuery, GraphTask, GraphView, PlanBlueprint, TaskView
from workflows.graph import TaskGraphWorkflow
from workflows.graph.state import GraphRunInput
from workflows.ids import graph_workflow_id

from ...conftest import assert_eventually

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
        TaskGraphWorkflow.run, run, id=graph_workflow_id(graph_id), task_queue=task_queue
    )
    return handle


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
