"""Accepting a blueprint into a graph: every check, then the new tasks and edges.

`expand` is pure (ids come from the `new_id(task_id)` it is given): the API runs it at the door to refuse a
bad blueprint with 422 before anything starts, and the graph runs it again in its `extend` update
(and for an agent's plan), against the tasks it already has. Refused: an empty blueprint, a
duplicate task id, an edge, GOTO, loop source or `include_task_results` naming an unknown task, a
cycle (loop directives included), a CEL condition that does not compile, a malformed data-flow
path, gate or failure directive, and updates of unknown or already started tasks. Assignees are
checked by the caller (it has the agent registry).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from contracts import (
        EdgeDefinition,
        EdgeStatus,
        GraphEdge,
        GraphTask,
        PlanBlueprint,
        TaskDefinition,
        TaskStatus,
        TaskUpdate,
    )

from .cel import ConditionError, Conditions
from .paths import PathError, steps_of

NOT_STARTED = (TaskStatus.PENDING, TaskStatus.WAITING, TaskStatus.READY)
UPDATABLE_STATUS = {"skipped": TaskStatus.SKIPPED, "cancelled": TaskStatus.CANCELLED}
"""`TaskUpdate.new_status` values a plan may set on a task that has not started."""


class BlueprintRefused(Exception):
    """The blueprint cannot be accepted; `problems` lists every reason (each names its task/edge)."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


@dataclass
class Expansion:
    """What an accepted blueprint adds to a graph."""

    tasks: list[GraphTask] = field(default_factory=list)
    edges: list[GraphEdge] = field(default_factory=list)
    updates: list[TaskUpdate] = field(default_factory=list)

    @property
    def ids(self) -> dict[str, str]:
        """Blueprint task id → engine UUID of the new tasks."""
        return {task.task_id: task.task_uuid for task in self.tasks}


def assignees_of(blueprint: PlanBlueprint) -> list[str]:
    """Every assignee a blueprint names (loop templates included), each once, in order."""
    found: list[str] = []
    for task in blueprint.new_tasks:
        loop = task.directives.loop_directive if task.directives else None
        for assignee in (task.assignee_id, loop.task_template.assignee_id if loop else None):
            if assignee and assignee not in found:
                found.append(assignee)
    return found


def expand(
    blueprint: PlanBlueprint,
    *,
    tasks: dict[str, GraphTask],
    edges: list[GraphEdge],
    new_id: Callable[[str], str],
    next_edge: int,
    principal: str,
    conditions: Conditions,
) -> Expansion:
    """Check `blueprint` against the graph's `tasks` and `edges`; what it adds, or `BlueprintRefused`."""
    problems: list[str] = []
    if not (blueprint.new_tasks or blueprint.new_edges or blueprint.update_tasks):
        raise BlueprintRefused(["the blueprint is empty: give new_tasks, new_edges or update_tasks"])
    by_local = {task.task_id: uuid for uuid, task in tasks.items()}
    new_local: dict[str, str] = {}
    for definition in blueprint.new_tasks:
        if definition.task_id in by_local or definition.task_id in new_local:
            problems.append(f"task {definition.task_id!r}: the task id is used twice")
            continue
        new_local[definition.task_id] = new_id(definition.task_id)
    known = {**by_local, **new_local}
    for definition in blueprint.new_tasks:
        problems += _task_problems(definition, known, conditions)
    new_edges: list[GraphEdge] = []
    for index, edge in enumerate(blueprint.new_edges):
        found = _edge_problems(index, edge, known, tasks, conditions)
        problems += found
        if not found:
            new_edges.append(_graph_edge(edge, known, f"e{next_edge + len(new_edges)}"))
    for implied in _loop_sources(blueprint.new_tasks, known, new_local):
        if not any(
            e.source == known[implied.source_task_id] and e.target == known[implied.target_task_id]
            for e in new_edges
        ):
            graph_edge = _graph_edge(implied, known, f"e{next_edge + len(new_edges)}")
            new_edges.append(graph_edge.model_copy(update={"kind": "loop"}))
    problems += _update_problems(blueprint.update_tasks, tasks)
    if not problems:
        cycle = _cycle(
            [*edges, *new_edges], {**{u: t.task_id for u, t in tasks.items()}, **_names(new_local)}
        )
        if cycle:
            problems.append(
                f"the edges make a cycle: {' → '.join(cycle)} (repeat work with a loop directive)"
            )
    if problems:
        raise BlueprintRefused(problems)
    new_tasks = [
        GraphTask(task_uuid=new_local[d.task_id], task_id=d.task_id, definition=d, added_by=principal)
        for d in blueprint.new_tasks
    ]
    return Expansion(tasks=new_tasks, edges=new_edges, updates=list(blueprint.update_tasks))


def _loop_sources(
    definitions: list[TaskDefinition], known: dict[str, str], new_local: dict[str, str]
) -> list[EdgeDefinition]:
    """The dependency each new loop task has on its list's source (an implied edge)."""
    implied = []
    for definition in definitions:
        loop = definition.directives.loop_directive if definition.directives else None
        if loop is not None and loop.input_source_task_id in known and definition.task_id in new_local:
            implied.append(
                EdgeDefinition(source_task_id=loop.input_source_task_id, target_task_id=definition.task_id)
            )
    return implied


def _names(new_local: dict[str, str]) -> dict[str, str]:
    return {uuid: local for local, uuid in new_local.items()}


def _graph_edge(edge: EdgeDefinition, known: dict[str, str], edge_id: str) -> GraphEdge:
    return GraphEdge(
        edge_id=edge_id,
        source=known[edge.source_task_id],
        target=known[edge.target_task_id],
        source_task_id=edge.source_task_id,
        target_task_id=edge.target_task_id,
        condition=edge.condition,
        data_flow=edge.data_flow,
        status=EdgeStatus.WAITING,
    )


def _task_problems(definition: TaskDefinition, known: dict[str, str], conditions: Conditions) -> list[str]:
    name = f"task {definition.task_id!r}"
    problems: list[str] = []
    directives = definition.directives
    overrides = definition.context_overrides
    if overrides and overrides.include_task_results:
        problems += [
            f"{name}: include_task_results names unknown task {other!r}"
            for other in overrides.include_task_results
            if other not in known
        ]
    if directives is None:
        return problems
    if directives.timeout_seconds is not None and directives.timeout_seconds <= 0:
        problems.append(f"{name}: timeout_seconds must be positive, got {directives.timeout_seconds}")
    failure = directives.on_failure
    if failure is not None:
        target = failure.get("target_task_id")
        if failure.get("type") != "GOTO":
            problems.append(f'{name}: on_failure.type must be "GOTO", got {failure.get("type")!r}')
        elif not isinstance(target, str) or target not in known:
            problems.append(f"{name}: on_failure GOTO names unknown task {target!r}")
        elif target == definition.task_id:
            problems.append(f"{name}: on_failure GOTO cannot name the task itself")
    problems += _gate_problems(name, directives.human_interaction)
    loop = directives.loop_directive
    if loop is not None:
        if loop.input_source_task_id not in known:
            problems.append(
                f"{name}: loop input_source_task_id names unknown task {loop.input_source_task_id!r}"
            )
        elif loop.input_source_task_id == definition.task_id:
            problems.append(f"{name}: a loop cannot iterate over its own output")
        if not loop.iteration_input_key:
            problems.append(f"{name}: loop iteration_input_key is empty")
        if loop.max_iterations is not None and loop.max_iterations <= 0:
            problems.append(f"{name}: loop max_iterations must be positive, got {loop.max_iterations}")
        if loop.task_template.directives and loop.task_template.directives.loop_directive:
            problems.append(f"{name}: a loop's task_template cannot loop again")
    return problems


def _gate_problems(name: str, gate: dict[str, Any] | None) -> list[str]:
    if gate is None:
        return []
    problems: list[str] = []
    approvers = gate.get("approvers", [])
    if not isinstance(approvers, list) or not all(isinstance(a, str) for a in approvers):
        problems.append(f"{name}: human_interaction.approvers must be a list of principals")
    timeout = gate.get("timeout_seconds")
    if timeout is not None and (not isinstance(timeout, int) or isinstance(timeout, bool) or timeout <= 0):
        problems.append(
            f"{name}: human_interaction.timeout_seconds must be a positive integer, got {timeout!r}"
        )
    prompt = gate.get("prompt")
    if prompt is not None and not isinstance(prompt, str):
        problems.append(f"{name}: human_interaction.prompt must be text")
    unknown = sorted(set(gate) - {"approvers", "timeout_seconds", "prompt"})
    if unknown:
        problems.append(
            f"{name}: human_interaction has unknown fields {unknown} (approvers, prompt, timeout_seconds)"
        )
    return problems


def _edge_problems(
    index: int,
    edge: EdgeDefinition,
    known: dict[str, str],
    tasks: dict[str, GraphTask],
    conditions: Conditions,
) -> list[str]:
    name = f"edge {index} ({edge.source_task_id} → {edge.target_task_id})"
    problems = [
        f"{name}: names unknown task {task_id!r}"
        for task_id in (edge.source_task_id, edge.target_task_id)
        if task_id not in known
    ]
    if edge.source_task_id == edge.target_task_id:
        problems.append(f"{name}: a task cannot depend on itself")
    target = tasks.get(known.get(edge.target_task_id, ""))
    if target is not None and (target.status not in NOT_STARTED or target.versions):
        problems.append(
            f"{name}: task {edge.target_task_id!r} has already started; it cannot wait for another"
        )
    if edge.condition is not None:
        try:
            conditions.check(edge.condition.expression)
        except ConditionError as err:
            problems.append(f"{name}: {err}")
    if edge.data_flow is not None:
        for key, path in edge.data_flow.mappings.items():
            try:
                steps_of(path)
            except PathError as err:
                problems.append(f"{name}: data_flow {key!r}: {err}")
    return problems


def _update_problems(updates: Iterable[TaskUpdate], tasks: dict[str, GraphTask]) -> list[str]:
    problems: list[str] = []
    for update in updates:
        task = tasks.get(str(update.task_id))
        if task is None:
            problems.append(f"update of task {update.task_id}: no such task in this graph")
            continue
        name = f"update of task {task.task_id!r}"
        if task.status not in NOT_STARTED or task.versions:
            problems.append(f"{name}: it is {task.status}; only tasks that have not started can change")
        if update.new_status is not None and update.new_status.lower() not in UPDATABLE_STATUS:
            problems.append(
                f"{name}: new_status must be one of {sorted(UPDATABLE_STATUS)}, got {update.new_status!r}"
            )
        if update.new_input_data is None and update.new_status is None:
            problems.append(f"{name}: give new_input_data or new_status")
    return problems


def _cycle(edges: list[GraphEdge], names: dict[str, str]) -> list[str]:
    """A cycle among `edges` as blueprint ids (first node repeated at the end), or [].

    Kahn's algorithm removes every node that no cycle leads to; each node left still has a parent
    left, so walking from parent to parent among them must come back to a node already seen.
    Iterative: graphs may be deep.
    """
    children: dict[str, list[str]] = {}
    parents: dict[str, list[str]] = {}
    indegree: dict[str, int] = {}
    for edge in edges:
        children.setdefault(edge.source, []).append(edge.target)
        parents.setdefault(edge.target, []).append(edge.source)
        indegree[edge.target] = indegree.get(edge.target, 0) + 1
        indegree.setdefault(edge.source, 0)
    free = [node for node, count in indegree.items() if count == 0]
    while free:
        node = free.pop()
        for child in children.get(node, []):
            indegree[child] -= 1
            if indegree[child] == 0:
                free.append(child)
    left = {node for node, count in indegree.items() if count > 0}
    if not left:
        return []
    node, seen = min(left), []
    while node not in seen:
        seen.append(node)
        node = min(parent for parent in parents[node] if parent in left)
    loop = [*seen[seen.index(node) :], node]
    return [names.get(n, n) for n in reversed(loop)]
