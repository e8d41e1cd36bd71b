"""Calls to graph workflows: start a graph, read it, command it, find what to follow or decide.

Built on `WorkflowRef.graph` (`ref.py`: same errors); a blueprint is checked before any of this
(`blueprints.py`). A completed or failed graph takes a rollback or a blueprint by being reopened
(`reopen`): its next run starts from its final state.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from datetime import timedelta
from typing import Any

from temporalio.client import Client
from temporalio.common import WorkflowIDReusePolicy
from temporalio.exceptions import ApplicationError
from temporalio.service import RPCError

from contracts import (
    ENDED_OUTSIDE,
    AgentSpec,
    BlueprintChange,
    GraphConfig,
    GraphIntervention,
    GraphQuery,
    GraphTask,
    GraphView,
    PlanBlueprint,
)
from core.settings import Settings
from workflows.graph import TaskGraphWorkflow, interventions, plans
from workflows.graph.blueprint import BlueprintRefused, expand
from workflows.graph.cel import Conditions
from workflows.graph.rules.interrupted import interrupted
from workflows.graph.state import GRAPH_TASK_TIMEOUT, GraphRunInput, Reopening
from workflows.graph.view import start_search_attributes
from workflows.identity.ids import graph_workflow_id
from workflows.identity.search_attributes import PROJECT
from workflows.versioning import GENERATION

from . import ended, scope, workflow
from .errors import Closed, NotFound, Refused
from .ref import WorkflowRef

log = logging.getLogger(__name__)

TITLE = "title"
"""The memo field that names a graph in `GET /graphs` (visibility lists memos, not the Web UI's
summary): its first task, and how many more (`title_of`)."""


def title_of(blueprint: PlanBlueprint) -> str:
    """What a graph is called in lists: `fetch`, or `fetch and 2 more tasks`."""
    names = [task.task_id for task in blueprint.new_tasks]
    if not names:
        return "no tasks"
    more = len(names) - 1
    return names[0] + (f" and {more} more task{'s' if more > 1 else ''}" if more else "")


async def start_graph(
    client: Client,
    settings: Settings,
    config: GraphConfig,
    blueprint: PlanBlueprint,
    agents: dict[str, AgentSpec],
) -> dict[str, str]:
    """Start the graph (`graph:<uuid>`), searchable by its id, status and channel at once; the
    engine UUID of each blueprint task (chosen here, so the answer needs no worker)."""
    run = GraphRunInput(
        config=config,
        blueprint=blueprint,
        agents=agents,
        task_uuids={task.task_id: str(uuid.uuid4()) for task in blueprint.new_tasks},
        generation=GENERATION,
    )
    await client.start_workflow(
        TaskGraphWorkflow.run,
        run,
        id=graph_workflow_id(config.graph_id),
        task_queue=settings.temporal.task_queue,
        task_timeout=GRAPH_TASK_TIMEOUT,
        static_summary=f"Graph of {len(blueprint.new_tasks)} tasks by {config.requested_by}",
        memo={TITLE: title_of(blueprint)},
        search_attributes=start_search_attributes(config),
    )
    return run.task_uuids


async def view(client: Client, graph_id: str, page: GraphQuery, *, wait: timedelta) -> GraphView:
    """The graph with one page of its tasks (as it ended, when Temporal ended it: `ended`)."""
    found, ending = await WorkflowRef.graph(graph_id).read(
        client, TaskGraphWorkflow.get_state, page, wait=wait
    )
    return ended.graph_view(found, ending)


async def get_task(client: Client, graph_id: str, task_uuid: str, *, wait: timedelta) -> GraphTask:
    """One task of the graph with every version it ran; `NotFound` for an unknown task."""
    graph = WorkflowRef.graph(graph_id)
    task, ending = await graph.read(client, TaskGraphWorkflow.get_task, task_uuid, wait=wait)
    if task is None:
        raise NotFound(f"no task {task_uuid} in {graph.name}")
    return ended.graph_task(task, ending)


def task_run_of(task: GraphTask, version: int | None, instance: int | None) -> str:
    """The workflow id of the task's run `version` (latest by default), loop `instance` if given."""
    if not task.versions:
        raise NotFound(f"task {task.task_uuid} ({task.task_id}) has not run yet")
    chosen = (
        task.versions[-1]
        if version is None
        else next((v for v in task.versions if v.version == version), None)
    )
    if chosen is None:
        known = ", ".join(str(v.version) for v in task.versions)
        raise NotFound(f"task {task.task_id} has no version {version}; it has: {known}")
    if instance is not None:
        run = next((i for i in chosen.instances if i.index == instance), None)
        if run is None:
            raise NotFound(f"version {chosen.version} of task {task.task_id} has no loop instance {instance}")
        workflow_id = run.workflow_id
    elif chosen.instances:
        raise NotFound(
            f"task {task.task_id} is a loop: name one of its {len(chosen.instances)} runs with `instance`"
        )
    else:
        workflow_id = chosen.workflow_id
    if workflow_id is None:
        raise NotFound(f"version {chosen.version} of task {task.task_id} has not started a run yet")
    return workflow_id


async def interaction_owner(client: Client, graph_id: str, interaction_id: str, *, wait: timedelta) -> str:
    """The workflow (the graph or one of its task runs) that asked `interaction_id`; `NotFound` if
    none; `Closed` when Temporal ended the graph's workflow (what it asked was withdrawn, even what
    its task runs, which outlive it, still ask)."""
    graph = WorkflowRef.graph(graph_id)
    owner: str | None
    owner, ending = await graph.read(client, TaskGraphWorkflow.find_interaction, interaction_id, wait=wait)
    if owner is None:
        raise NotFound(f"no interaction {interaction_id!r} in {graph.name}")
    if ending is not None:
        again = "; roll a task back (ROLLBACK_AND_MODIFY) to reopen it: its gates ask again"
        raise Closed(
            f"{graph.name} {ending.words()}: {interaction_id!r} was withdrawn with everything it "
            f"asked{'' if ending.status == 'cancelled' else again}"
        )
    return owner


async def update_or_reopen(
    client: Client,
    settings: Settings,
    graph_id: str,
    update: Any,
    argument: Any,
    *,
    reopen_with: GraphIntervention | BlueprintChange | None = None,
) -> GraphView:
    """Run the update (every graph update answers with the graph's view); a completed or failed graph
    given a rollback or a blueprint (`reopen_with`) is reopened with it instead (its next run, from its
    final state)."""
    try:
        view_after = await WorkflowRef.graph(graph_id).run_update(
            client, update, argument, GraphView, within=settings.api.busy_retry_seconds
        )
    except Closed:
        if reopen_with is None:
            raise
        principal = reopen_with.principal
        if isinstance(reopen_with, GraphIntervention):
            await reopen(client, settings, graph_id, principal, intervention=reopen_with)
        else:
            await reopen(client, settings, graph_id, principal, change=reopen_with)
        return await view(client, graph_id, GraphQuery(), wait=REOPEN_WAIT)
    return view_after


REOPENABLE = ("completed", "failed", *ENDED_OUTSIDE)
REOPEN_WAIT = timedelta(seconds=10)
"""How long reading a closed graph's final state (or a reopened one's first) may take (a worker replays it)."""


async def reopen(
    client: Client,
    settings: Settings,
    graph_id: str,
    principal: str,
    *,
    intervention: GraphIntervention | None = None,
    change: BlueprintChange | None = None,
) -> None:
    """Take a closed graph up again: its next run (same workflow id) starts from its final state
    with the change applied; one Temporal ended while it ran, from its last good state
    (`rules.interrupted`: its runs then in flight are cancelled, their tasks run again). The change
    is checked here against that state first (the same checks as on a running graph: `NotFound`,
    `Refused`); a cancelled graph is not reopened (`Closed`)."""
    graph = WorkflowRef.graph(graph_id)
    description, (last, ending) = await asyncio.gather(
        graph.handle(client).describe(), graph.read(client, TaskGraphWorkflow.get_run_input, wait=REOPEN_WAIT)
    )
    state = last.state
    assert state is not None
    in_flight: list[str] = []
    if ending is not None and state.status in ended.STILL_GOING:
        at = ending.at or state.last_activity
        in_flight = interrupted(state, ending.status, f"its workflow {ending.words()}", at)
    if state.status not in REOPENABLE:
        raise Closed(
            f"{graph.name} is {state.status}; only a completed, failed, terminated or timed-out "
            "graph can be reopened"
        )
    if intervention is not None:
        if intervention.intervention_type != "ROLLBACK_AND_MODIFY":
            raise Closed(
                f"{graph.name} is {state.status}: nothing runs to pause or resume; "
                "ROLLBACK_AND_MODIFY a task to reopen it"
            )
        try:
            interventions.check(state, intervention)
        except ApplicationError as err:
            raise Refused(err.type, err.message) from err
        what = f"ROLLBACK_AND_MODIFY of {state.tasks[str(intervention.target_task_uuid)].task_id!r}"
        reason = f"{what}: {intervention.comment}"
    else:
        assert change is not None
        try:
            expand(
                change.blueprint,
                tasks=state.tasks,
                edges=state.edges,
                new_id=lambda local: f"check-{local}",
                next_edge=state.next_edge,
                principal=principal,
                conditions=Conditions(),
            )
        except BlueprintRefused as err:
            raise Refused(plans.refused(err).type, str(err)) from err
        reason = "a blueprint sent to it"
    if ending is not None:
        reason += f"; its last run {ending.words()}"
    await _cancel_runs(client, in_flight)
    run = GraphRunInput(
        config=last.config,
        state=state,
        stream=last.stream,  # its events go on where they stopped, offsets and sequence ids as one
        continue_as_new_after_events=last.continue_as_new_after_events,
        reopening=Reopening(
            principal=principal,
            reason=reason,
            previous_run_id=description.run_id or "",
            intervention=intervention,
            change=change,
        ),
        generation=GENERATION,
    )
    # a session's graph, reopened here, has no parent any more: it keeps its session's project
    project = last.config.project or description.typed_search_attributes.get(PROJECT)
    if project is None and description.parent_id is not None:
        project = (await scope.described(client, description.parent_id)).project
    await client.start_workflow(
        TaskGraphWorkflow.run,
        run,
        id=graph.workflow_id,
        task_queue=settings.temporal.task_queue,
        task_timeout=GRAPH_TASK_TIMEOUT,
        id_reuse_policy=WorkflowIDReusePolicy.ALLOW_DUPLICATE,
        static_summary=f"Graph reopened by {principal}: {reason}"[:200],
        memo=await description.memo(),  # its title (`GET /graphs` lists the latest run)
        search_attributes=start_search_attributes(last.config.model_copy(update={"project": project})),
    )


async def _cancel_runs(client: Client, runs: list[str]) -> None:
    """Ask the runs a graph had in flight when Temporal ended it to cancel (they outlive it); best
    effort: one that has ended meanwhile is left alone, and what they report later is stale."""
    results = await asyncio.gather(
        *(client.get_workflow_handle(run).cancel() for run in runs), return_exceptions=True
    )
    for run, result in zip(runs, results, strict=True):
        if isinstance(result, Exception) and not (
            isinstance(result, RPCError) and workflow.is_not_found(result)
        ):
            log.info("run %s of an ended graph not cancelled: %s", run, result)
