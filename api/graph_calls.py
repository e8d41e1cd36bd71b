"""Calls to graph workflows: check a blueprint at the door, start a graph, read and command it.

Built on `workflow_calls` (same errors, same statuses). A blueprint is checked here before anything
starts: its size (413), its assignees against the agent registry and every rule of
`workflows.graph.blueprint.expand` (422 naming the task, edge or expression); an extension's
`workflow_id` against the graph it is sent to. A completed or failed graph takes a rollback or a
blueprint by being reopened (`reopen`): its next run starts from its final state.
"""

from __future__ import annotations

import json
import uuid
from datetime import timedelta
from typing import Any

from fastapi.exceptions import RequestValidationError
from temporalio.client import Client
from temporalio.common import SearchAttributePair, TypedSearchAttributes, WorkflowIDReusePolicy
from temporalio.exceptions import ApplicationError

from contracts import (
    AgentSpec,
    BlueprintChange,
    GraphConfig,
    GraphIntervention,
    GraphQuery,
    GraphView,
    PlanBlueprint,
)
from core.agent_registry import AgentRegistry, UnknownAssignee
from core.settings import Settings
from workflows.graph import TaskGraphWorkflow, interventions, plans
from workflows.graph.blueprint import BlueprintRefused, expand
from workflows.graph.cel import Conditions
from workflows.graph.state import GraphRunInput, Reopening
from workflows.identity import search
from workflows.identity.ids import graph_id_of, graph_workflow_id

from . import workflow_calls
from .limits import TooLarge


def name_of(graph_id: str) -> str:
    """How messages name the graph."""
    return f"graph {graph_id_of(graph_id)!r}"


def check_size(blueprint: PlanBlueprint, settings: Settings) -> None:
    """413 when the blueprint is over SYNAPSE_MAX_BLUEPRINT_BYTES."""
    size = len(json.dumps(blueprint.model_dump(mode="json")).encode())
    limit = settings.limits.max_blueprint_bytes
    if size > limit:
        raise TooLarge("the blueprint", size, limit, "SYNAPSE_MAX_BLUEPRINT_BYTES")


def resolve_assignees(
    registry: AgentRegistry, assignees: list[tuple[tuple[str | int, ...], str]], key: str
) -> dict[str, AgentSpec]:
    """Each assignee's declaration (a `hash` group picks by `key`), or 422 naming each unknown one."""
    problems, found = [], {}
    for loc, assignee in assignees:
        try:
            found[assignee] = registry.resolve(assignee, key)
        except UnknownAssignee as err:
            problems.append({"loc": ("body", *loc), "msg": str(err), "type": "unknown_assignee"})
    if problems:
        raise RequestValidationError(problems)
    return found


def blueprint_assignees(
    blueprint: PlanBlueprint, prefix: tuple[str | int, ...]
) -> list[tuple[tuple[str | int, ...], str]]:
    """Every assignee of a blueprint with where it stands in the request body."""
    found: list[tuple[tuple[str | int, ...], str]] = []
    for index, task in enumerate(blueprint.new_tasks):
        found.append(((*prefix, "new_tasks", index, "assignee_id"), task.assignee_id))
        loop = task.directives.loop_directive if task.directives else None
        if loop is not None:
            where = (
                *prefix,
                "new_tasks",
                index,
                "directives",
                "loop_directive",
                "task_template",
                "assignee_id",
            )
            found.append((where, loop.task_template.assignee_id))
    return found


def refused(problems: list[str], loc: tuple[str | int, ...]) -> RequestValidationError:
    """A 422 listing each reason a blueprint was refused."""
    return RequestValidationError(
        [{"loc": ("body", *loc), "msg": problem, "type": "blueprint_refused"} for problem in problems]
    )


def for_graph(blueprint: PlanBlueprint, graph_id: str) -> PlanBlueprint:
    """The blueprint to extend graph `graph_id` with: a `workflow_id` naming another graph is 422;
    naming this one it is accepted, and dropped (the graph refuses any: it extends itself)."""
    if blueprint.workflow_id is None:
        return blueprint
    if str(blueprint.workflow_id) != graph_id_of(graph_id):
        raise refused(
            [
                f"workflow_id {blueprint.workflow_id} names another graph than {name_of(graph_id)}; "
                f"send the blueprint to POST /graphs/{blueprint.workflow_id}/blueprint, or leave it unset"
            ],
            ("workflow_id",),
        )
    return blueprint.model_copy(update={"workflow_id": None})


def check_new_blueprint(
    blueprint: PlanBlueprint, registry: AgentRegistry, settings: Settings, graph_id: str
) -> dict[str, AgentSpec]:
    """Every check a new graph's blueprint must pass before it starts (413 / 422); its agents."""
    check_size(blueprint, settings)
    agents = resolve_assignees(registry, blueprint_assignees(blueprint, ("blueprint",)), graph_id)
    try:
        expand(
            blueprint,
            tasks={},
            edges=[],
            new_id=lambda local: f"check-{local}",
            next_edge=1,
            principal="check",
            conditions=Conditions(),
        )
    except BlueprintRefused as err:
        raise refused(err.problems, ("blueprint",)) from err
    return agents


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
    )
    await client.start_workflow(
        TaskGraphWorkflow.run,
        run,
        id=graph_workflow_id(config.graph_id),
        task_queue=settings.temporal.task_queue,
        static_summary=f"Graph of {len(blueprint.new_tasks)} tasks by {config.requested_by}",
        search_attributes=TypedSearchAttributes(
            [
                SearchAttributePair(search.STATUS, "running"),
                SearchAttributePair(search.CHANNEL, config.channel),
            ]
        ),
    )
    return run.task_uuids


async def query(client: Client, graph_id: str, query: Any, *args: Any, wait: timedelta) -> Any:
    """Run one of the graph's queries; see `workflow_calls.query`."""
    return await workflow_calls.query(
        client, graph_workflow_id(graph_id), name_of(graph_id), query, *args, wait=wait
    )


async def view(client: Client, graph_id: str, page: GraphQuery, *, wait: timedelta) -> GraphView:
    """The graph with one page of its tasks."""
    found: GraphView = await query(client, graph_id, TaskGraphWorkflow.get_state, page, wait=wait)
    return found


REOPENABLE = ("completed", "failed")
REOPEN_WAIT = timedelta(seconds=10)
"""How long reading a closed graph's final state may take (a worker replays it)."""


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
    with the change applied. The change is checked here against that state first (the same checks
    as on a running graph: 404/409/422); a cancelled graph is not reopened (409)."""
    workflow_id = graph_workflow_id(graph_id)
    description = await client.get_workflow_handle(workflow_id).describe()
    last: GraphRunInput = await query(client, graph_id, TaskGraphWorkflow.get_run_input, wait=REOPEN_WAIT)
    state = last.state
    assert state is not None
    if state.status not in REOPENABLE:
        raise workflow_calls.Closed(
            f"{name_of(graph_id)} is {state.status}; only a completed or failed graph can be reopened"
        )
    if intervention is not None:
        if intervention.intervention_type != "ROLLBACK_AND_MODIFY":
            raise workflow_calls.Closed(
                f"{name_of(graph_id)} is {state.status}: nothing runs to pause or resume; "
                "ROLLBACK_AND_MODIFY a task to reopen it"
            )
        try:
            interventions.check(state, intervention)
        except ApplicationError as err:
            raise workflow_calls.Refused(err.type, err.message) from err
        what = f"ROLLBACK_AND_MODIFY of {state.tasks[str(intervention.target_task_id)].task_id!r}"
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
            raise workflow_calls.Refused(plans.refused(err).type, str(err)) from err
        reason = "a blueprint sent to it"
    run = GraphRunInput(
        config=last.config,
        state=state,
        continue_as_new_after_events=last.continue_as_new_after_events,
        reopening=Reopening(
            principal=principal,
            reason=reason,
            previous_run_id=description.run_id or "",
            intervention=intervention,
            change=change,
        ),
    )
    await client.start_workflow(
        TaskGraphWorkflow.run,
        run,
        id=workflow_id,
        task_queue=settings.temporal.task_queue,
        id_reuse_policy=WorkflowIDReusePolicy.ALLOW_DUPLICATE,
        static_summary=f"Graph reopened by {principal}: {reason}"[:200],
        search_attributes=TypedSearchAttributes(
            [
                SearchAttributePair(search.STATUS, "running"),
                SearchAttributePair(search.CHANNEL, last.config.channel),
            ]
        ),
    )
