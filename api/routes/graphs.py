"""Graph routes: submit a blueprint, watch it run, decide its gates and tool approvals, extend it,
pause, resume, roll a task back, cancel."""

from __future__ import annotations

import uuid
from typing import Annotated, Any

from fastapi import APIRouter, Body, Depends, HTTPException, Query, Request
from fastapi.responses import PlainTextResponse, Response, StreamingResponse

from contracts import (
    AuditEntry,
    AuditTrail,
    BlueprintChange,
    GraphConfig,
    GraphControl,
    GraphCreated,
    GraphIntervention,
    GraphQuery,
    GraphStatus,
    GraphSubmission,
    GraphSummary,
    GraphTask,
    GraphView,
    InteractionDecision,
    InteractionOutcome,
    InterventionRequest,
    PlanBlueprint,
    Principal,
)
from core.security import Caller
from workflows.graph import TaskGraphWorkflow
from workflows.identity.ids import graph_id_of, graph_workflow_id

from ..calls import blueprints, decisions, graphs, listing, scope
from ..calls.controls import control_of
from ..calls.ref import WorkflowRef
from ..calls.sizes import check_size
from ..deps import (
    ClientDep,
    Events,
    GraphId,
    InteractionId,
    Operator,
    RegistryDep,
    SettingsDep,
    TaskUuid,
    Viewer,
    decider,
)
from ..errors import BUSY_RESPONSE, ERROR_RESPONSES
from ..scope import check_named_artifacts
from ..sse.response import EVENTS_RESPONSES
from .interactions import DECISION_RESPONSES, answer, check_matches

router = APIRouter(prefix="/graphs", tags=["graphs"])

GraphDecider = Annotated[Caller, Depends(decider(lambda path: graph_workflow_id(str(path["graph_id"]))))]
"""An approver or higher; a refused caller's attempt is recorded in the audit trail of the graph
(which passes it on to the task run that asked)."""

OptionalControl = Annotated[GraphControl | None, Body()]


@router.get("", response_model=list[GraphSummary], responses=ERROR_RESPONSES(401, 403, 422))
async def list_graphs(
    client: ClientDep,
    caller: Viewer,
    status: Annotated[GraphStatus | None, Query(description="Only graphs in this status.")] = None,
    limit: Annotated[int, Query(ge=1, le=500, description="At most this many, newest first.")] = 50,
) -> list[GraphSummary]:
    """Graphs, newest first, from Temporal's visibility (a reopened graph once, as its latest run). A
    key scoped to projects sees only theirs (a session's graph it reaches through its session)."""
    return await listing.list_graphs(client, status=status, limit=limit, within=scope.visible_to(caller))


@router.post("", status_code=201, response_model=GraphCreated, responses=BUSY_RESPONSE)
async def create_graph(
    body: GraphSubmission,
    client: ClientDep,
    settings: SettingsDep,
    registry: RegistryDep,
    caller: Operator,
    request: Request,
) -> GraphCreated:
    """Run a blueprint as a new graph; answers with the engine UUID of each blueprint task.

    Refused before anything starts: 413 over SYNAPSE_MAX_BLUEPRINT_BYTES; 422 for an unknown
    assignee, a duplicate task id, an edge/GOTO/loop/parent naming an unknown task, a cycle, a CEL
    condition that does not compile, a malformed data-flow path, directive or context override, a
    field the engine would ignore (`workflow_id`: the server chooses the graph's id), each named.
    A key scoped to projects starts it in one of them: `project` one it may act in (else 403), or
    none for its only project (422 when it has several); an artifact the blueprint names must be
    one the key may read (422 `no artifact` otherwise).
    """
    try:
        project = scope.project_to_start(caller, body.project)
    except ValueError as err:
        raise HTTPException(422, str(err)) from None
    if not caller.may_act_in(project):
        raise HTTPException(403, scope.not_its_project(caller, project))
    await check_named_artifacts(request, caller, "blueprint", body.blueprint)
    blueprint = body.blueprint
    graph_id = str(uuid.uuid4())
    agents = blueprints.check_new(blueprint, registry, settings, graph_id)
    config = GraphConfig(
        graph_id=graph_id,
        requested_by=caller.principal or body.principal or "anonymous",
        approvers=body.approvers or [],
        approval_timeout_seconds=body.approval_timeout_seconds or 300,
        project=project,
        inline_input_bytes=settings.limits.inline_bytes,
    )
    tasks = await graphs.start_graph(client, settings, config, blueprint, agents)
    return GraphCreated(
        graph_id=graph_id, workflow_id=graph_workflow_id(graph_id), tasks=tasks, status="running"
    )


@router.get("/{graph_id}", response_model=GraphView)
async def get_graph(
    graph_id: GraphId,
    client: ClientDep,
    settings: SettingsDep,
    caller: Viewer,
    offset: Annotated[int, Query(ge=0, description="First task of the page.")] = 0,
    limit: Annotated[int, Query(ge=1, le=1000, description="Tasks per page.")] = 100,
) -> GraphView:
    """Status, a page of tasks (uuid, blueprint id, status, version, assignee, output, timings),
    their edges, and every gate and tool approval waiting for a person."""
    return await graphs.view(
        client, graph_id, GraphQuery(offset=offset, limit=limit), wait=settings.api.query_wait
    )


@router.get("/{graph_id}/tasks/{task_uuid}", response_model=GraphTask)
async def get_task(
    graph_id: GraphId, task_uuid: TaskUuid, client: ClientDep, settings: SettingsDep, caller: Viewer
) -> GraphTask:
    """One task with every version it ran (superseded ones included), its inputs and outputs."""
    return await graphs.get_task(client, graph_id, task_uuid, wait=settings.api.query_wait)


@router.get(
    "/{graph_id}/tasks/{task_uuid}/events", response_class=StreamingResponse, responses=EVENTS_RESPONSES
)
async def task_events(
    graph_id: GraphId,
    task_uuid: TaskUuid,
    client: ClientDep,
    settings: SettingsDep,
    caller: Viewer,
    stream: Events,
    version: Annotated[int | None, Query(ge=1, description="Which version (default: the latest).")] = None,
    instance: Annotated[int | None, Query(ge=0, description="Which loop instance (loop tasks).")] = None,
) -> Response:
    """One run of a task as server-sent events: its agent's thinking, tool calls and approvals, and
    a running terminal command's output as it comes, until the run closes."""
    task = await graphs.get_task(client, graph_id, task_uuid, wait=settings.api.query_wait)
    return await stream.of(graphs.task_run_of(task, version, instance))


@router.get(
    "/{graph_id}/diagram",
    response_class=PlainTextResponse,
    responses={200: {"content": {"text/plain": {}}, "description": "A Mermaid flowchart."}},
)
async def get_diagram(
    graph_id: GraphId, client: ClientDep, settings: SettingsDep, caller: Viewer
) -> PlainTextResponse:
    """The graph as a Mermaid flowchart (paste it into any Mermaid viewer): each task with its status."""
    diagram: str = await WorkflowRef.graph(graph_id).query(
        client, TaskGraphWorkflow.get_diagram, wait=settings.api.query_wait
    )
    return PlainTextResponse(diagram)


@router.get("/{graph_id}/audit", response_model=AuditTrail, responses=ERROR_RESPONSES(401, 403, 404, 422))
async def get_audit(
    graph_id: GraphId, client: ClientDep, settings: SettingsDep, caller: Viewer
) -> AuditTrail:
    """Extensions, interventions, gate decisions and reopenings, with who, where and when."""
    entries: list[AuditEntry] = await WorkflowRef.graph(graph_id).query(
        client, TaskGraphWorkflow.get_audit, wait=settings.api.query_wait
    )
    return AuditTrail(workflow_id=graph_workflow_id(graph_id_of(graph_id)), entries=entries)


@router.get("/{graph_id}/events", response_class=StreamingResponse, responses=EVENTS_RESPONSES)
async def graph_events(
    graph_id: GraphId,
    client: ClientDep,
    settings: SettingsDep,
    caller: Viewer,
    stream: Events,
) -> Response:
    """Task state changes, gates and tool approvals as server-sent events, until the graph closes."""
    await graphs.view(client, graph_id, GraphQuery(limit=1), wait=settings.api.query_wait)  # 404 first
    return await stream.of(graph_workflow_id(graph_id))


@router.post("/{graph_id}/blueprint", response_model=GraphView, responses=BUSY_RESPONSE)
async def extend_graph(
    graph_id: GraphId,
    blueprint: PlanBlueprint,
    client: ClientDep,
    settings: SettingsDep,
    registry: RegistryDep,
    caller: Operator,
    request: Request,
    principal: Annotated[
        str | None,
        Query(max_length=200, description="Who changes it (API keys off; with keys, the key's principal)."),
    ] = None,
) -> GraphView:
    """Add tasks and edges to a running graph, or change tasks that have not started (422 with
    every reason when the graph refuses it; nothing changes then). A `workflow_id` must name this
    graph, or be left out."""
    blueprints.check_size(blueprint, settings)
    await check_named_artifacts(request, caller, "blueprint", blueprint)
    blueprint = blueprints.for_graph(blueprint, graph_id)
    agents = blueprints.resolve_assignees(
        registry, blueprints.blueprint_assignees(blueprint, ()), graph_id_of(graph_id)
    )
    who = caller.principal or principal or Principal.ANONYMOUS
    change = BlueprintChange(blueprint=blueprint, principal=who, channel="http", agents=agents)
    return await graphs.update_or_reopen(
        client, settings, graph_id, TaskGraphWorkflow.extend, change, reopen_with=change
    )


@router.post("/{graph_id}/interventions", response_model=GraphView, responses=BUSY_RESPONSE)
async def intervene(
    graph_id: GraphId,
    body: InterventionRequest,
    client: ClientDep,
    settings: SettingsDep,
    registry: RegistryDep,
    caller: Operator,
) -> GraphView:
    """PAUSE or RESUME a task, or ROLLBACK_AND_MODIFY it: the task re-runs as a new version from
    `rollback_to_version`'s inputs with `new_input_data` over them (and `new_assignee_id`); running
    tasks downstream are cancelled and everything downstream re-runs. Answers once it is done.
    404 unknown task; 409 nothing to pause/resume, or a task that never ran; 422 no such version."""
    check_size("comment", body.comment, settings.limits.max_comment_bytes, "SYNAPSE_MAX_COMMENT_BYTES")
    if body.new_assignee_id:
        blueprints.resolve_assignees(
            registry, [(("new_assignee_id",), body.new_assignee_id)], graph_id_of(graph_id)
        )
    request = GraphIntervention(
        **body.model_dump(exclude={"principal"}),
        principal=caller.principal or body.principal or Principal.ANONYMOUS,
        channel="http",
    )
    return await graphs.update_or_reopen(
        client, settings, graph_id, TaskGraphWorkflow.intervene_checked, request, reopen_with=request
    )


def _control(name: str, update: Any, summary: str) -> None:
    """Add `POST /graphs/{id}/<name>`: run the graph's `<name>_checked` update as the caller."""

    async def control(
        graph_id: GraphId,
        client: ClientDep,
        settings: SettingsDep,
        caller: Operator,
        body: OptionalControl = None,
    ) -> GraphView:
        return await graphs.update_or_reopen(
            client, settings, graph_id, update, control_of(body, caller, settings)
        )

    control.__doc__ = summary
    router.post(
        f"/{{graph_id}}/{name}", response_model=GraphView, responses=BUSY_RESPONSE, name=f"graph_{name}"
    )(control)


_control(
    "pause",
    TaskGraphWorkflow.pause_checked,
    "Start nothing new; running tasks halt at their next safe point.",
)
_control("resume", TaskGraphWorkflow.resume_checked, "Let a paused graph go on.")
_control("cancel", TaskGraphWorkflow.cancel_checked, "Cancel every running task and close the graph.")


@router.post(
    "/{graph_id}/interactions/{interaction_id}",
    response_model=InteractionOutcome,
    responses={**DECISION_RESPONSES, **ERROR_RESPONSES(413, 422)},
)
async def decide(
    graph_id: GraphId,
    interaction_id: InteractionId,
    body: InteractionDecision,
    client: ClientDep,
    settings: SettingsDep,
    caller: GraphDecider,
    request: Request,
) -> Any:
    """Approve or deny a gate of the graph or a tool call inside one of its tasks, or answer a
    question one of its tasks asks (`response_data.text`; `approved` may be left out for it)."""
    owner = await graphs.interaction_owner(client, graph_id, interaction_id, wait=settings.api.query_wait)
    check_matches(interaction_id, body)
    result = await decisions.decide(
        client,
        settings,
        caller,
        target=WorkflowRef.graph(graph_id).on(owner),
        interaction_id=interaction_id,
        body=body,
    )
    if isinstance(result, InteractionOutcome):
        request.app.state.metrics.decided(result)
    return answer(result)
