"""Checking a blueprint at the door, before a graph starts or is extended with it.

Its size (`TooLarge`), its assignees against the agent registry and every rule of
`workflows.graph.blueprint.expand` (`Invalid`, naming the task, edge or expression); an
extension's `workflow_id` against the graph it is sent to. Each problem names where it stands in
the input (`Problem.loc`), so the API can point at the field.
"""

from __future__ import annotations

import json

from contracts import AgentSpec, PlanBlueprint
from core.agent_registry import AgentRegistry, UnknownAssignee
from core.settings import Settings
from workflows.graph.blueprint import BlueprintRefused, expand
from workflows.graph.cel import Conditions
from workflows.identity.ids import graph_id_of

from .errors import Invalid, Problem
from .ref import WorkflowRef
from .sizes import TooLarge

Location = tuple[str | int, ...]
"""Where a field stands in the input: `("blueprint", "new_tasks", 0, "assignee_id")`."""


def check_size(blueprint: PlanBlueprint, settings: Settings) -> None:
    """`TooLarge` when the blueprint is over SYNAPSE_MAX_BLUEPRINT_BYTES."""
    size = len(json.dumps(blueprint.model_dump(mode="json")).encode())
    limit = settings.limits.max_blueprint_bytes
    if size > limit:
        raise TooLarge("the blueprint", size, limit, "SYNAPSE_MAX_BLUEPRINT_BYTES")


def resolve_assignees(
    registry: AgentRegistry, assignees: list[tuple[Location, str]], key: str
) -> dict[str, AgentSpec]:
    """Each assignee's declaration (a `hash` group picks by `key`), or `Invalid` naming each unknown one."""
    problems, found = [], {}
    for loc, assignee in assignees:
        try:
            found[assignee] = registry.resolve(assignee, key)
        except UnknownAssignee as err:
            problems.append(Problem(loc, str(err), "unknown_assignee"))
    if problems:
        raise Invalid(problems)
    return found


def blueprint_assignees(blueprint: PlanBlueprint, prefix: Location) -> list[tuple[Location, str]]:
    """Every assignee of a blueprint with where it stands in the input (`prefix`: the blueprint's place)."""
    found: list[tuple[Location, str]] = []
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


def refused(problems: list[str], loc: Location) -> Invalid:
    """`Invalid` listing each reason a blueprint was refused, all at `loc`."""
    return Invalid([Problem(loc, problem, "blueprint_refused") for problem in problems])


def for_graph(blueprint: PlanBlueprint, graph_id: str) -> PlanBlueprint:
    """The blueprint to extend graph `graph_id` with: a `workflow_id` naming another graph is
    `Invalid`; naming this one it is accepted, and dropped (the graph refuses any: it extends itself)."""
    if blueprint.workflow_id is None:
        return blueprint
    if str(blueprint.workflow_id) != graph_id_of(graph_id):
        raise refused(
            [
                f"workflow_id {blueprint.workflow_id} names another graph than "
                f"{WorkflowRef.graph(graph_id).name}; send the blueprint to "
                f"POST /graphs/{blueprint.workflow_id}/blueprint, or leave it unset"
            ],
            ("workflow_id",),
        )
    return blueprint.model_copy(update={"workflow_id": None})


def check_new(
    blueprint: PlanBlueprint, registry: AgentRegistry, settings: Settings, graph_id: str
) -> dict[str, AgentSpec]:
    """Every check a new graph's blueprint (`GraphSubmission.blueprint`) must pass before it
    starts (`TooLarge`, `Invalid`); its agents."""
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
