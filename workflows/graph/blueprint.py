"""Accepting a blueprint into a graph: every check, then the new tasks and edges.

`expand` is pure (ids come from the `new_id(task_id)` it is given): the API runs it at the door to refuse a
bad blueprint with 422 before anything starts, and the graph runs it again in its `extend` update
(and for an agent's plan), against the tasks it already has. Refused here: an empty blueprint, a
`workflow_id` (a new graph's id is the server's; a blueprint extends the graph it is sent to), a
duplicate task id, an edge naming an unknown task, a cycle (loop directives included), a CEL
condition that does not compile, a malformed data-flow path, a GOTO whose target can never run
(`reach`), and updates of unknown or already started tasks; what each task may say (parent, directives, context overrides, its loop's
task_template) is checked by `checks`. Assignees are checked by the caller (it has the agent
registry).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

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
from .checks import Names, task_problems
from .paths import PathError, steps_of
from .reach import Shape, dead_gotos

NOT_STARTED = (TaskStatus.PENDING, TaskStatus.WAITING, TaskStatus.READY)
UPDATABLE_STATUS = {"skipped": TaskStatus.SKIPPED, "cancelled": TaskStatus.CANCELLED}
"""`TaskUpdate.new_status` values a plan may set on a task that has not started."""


class BlueprintRefused(Exception):
    """The blueprint cannot be accepted; `problems` lists every reason (each names its task/edge)."""

    def __init__(self, problems: list[str], *, conflict: bool = False) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems
        self.conflict = conflict
        """Every problem is an update of a task that has started (409: roll it back instead)."""


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
    reach: bool = True,
) -> Expansion:
    """Check `blueprint` against the graph's `tasks` and `edges`; what it adds, or `BlueprintRefused`.

    `reach` False leaves out the check of GOTO targets that can never run (the engine's property
    tests drive such graphs, to check that none of those targets ever runs)."""
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
    if blueprint.workflow_id is not None:
        problems.append(_workflow_id_problem(str(blueprint.workflow_id), extending=bool(tasks)))
    names = Names(
        tasks=known,
        templates=_templates(blueprint.new_tasks, tasks.values()),
        set_aside=_set_aside(blueprint.update_tasks, tasks),
    )
    for definition in blueprint.new_tasks:
        problems += task_problems(definition, names)
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
    started = _started_problems(blueprint.update_tasks, tasks)
    problems += _update_problems(blueprint.update_tasks, tasks)
    if not problems:
        cycle = _cycle(
            [*edges, *new_edges], {**{u: t.task_id for u, t in tasks.items()}, **_names(new_local)}
        )
        if cycle:
            problems.append(
                f"the edges make a cycle: {' → '.join(cycle)} (repeat work with a loop directive)"
            )
        elif reach:
            before = _shape(list(tasks.values()), [], edges, known)
            problems += dead_gotos(
                _shape(list(tasks.values()), blueprint.new_tasks, [*edges, *new_edges], known), before
            )
    if problems or started:
        raise BlueprintRefused(problems + started, conflict=not problems)
    new_tasks = [
        GraphTask(task_uuid=new_local[d.task_id], task_id=d.task_id, definition=d, added_by=principal)
        for d in blueprint.new_tasks
    ]
    return Expansion(tasks=new_tasks, edges=new_edges, updates=list(blueprint.update_tasks))


def _shape(
    existing: list[GraphTask],
    definitions: list[TaskDefinition],
    edges: list[GraphEdge],
    known: dict[str, str],
) -> Shape:
    """What reachability needs of the graph's tasks and the blueprint's new ones."""
    gotos: dict[str, str] = {}
    for definition in [*(task.definition for task in existing), *definitions]:
        failure = definition.directives.on_failure if definition.directives else None
        target = failure.get("target_task_id") if failure else None
        if isinstance(target, str) and target in known:
            gotos[definition.task_id] = target
    return Shape(
        tasks=[task.task_id for task in existing] + [d.task_id for d in definitions],
        edges=[(edge.source_task_id, edge.target_task_id) for edge in edges],
        gotos=gotos,
        ran=frozenset(task.task_id for task in existing if task.versions),
    )


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


def _workflow_id_problem(workflow_id: str, *, extending: bool) -> str:
    if extending:
        return (
            f"workflow_id {workflow_id}: a blueprint extends the graph it is sent to; leave workflow_id unset"
        )
    return (
        f"workflow_id {workflow_id}: a new graph's id is chosen by the server; leave workflow_id unset "
        f"(to add to graph {workflow_id}, send the blueprint to it: POST /graphs/{workflow_id}/blueprint)"
    )


def _templates(definitions: Iterable[TaskDefinition], existing: Iterable[GraphTask]) -> dict[str, str]:
    """Loop task_template id → its loop task's id, over the blueprint's tasks and the graph's."""
    found: dict[str, str] = {}
    for definition in [*definitions, *(task.definition for task in existing)]:
        loop = definition.directives.loop_directive if definition.directives else None
        if loop is not None:
            found.setdefault(loop.task_template.task_id, definition.task_id)
    return found


def _set_aside(updates: Iterable[TaskUpdate], tasks: dict[str, GraphTask]) -> dict[str, str]:
    """Tasks a failure cannot continue at: cancelled ones, and those this blueprint's updates set
    to skipped or cancelled. (A SKIPPED task of the graph stays a valid target: a false condition
    or a denied gate skips it too, and a GOTO resets and runs it.)"""
    found = {
        task.task_id: "which is cancelled" for task in tasks.values() if task.status == TaskStatus.CANCELLED
    }
    for update in updates:
        task = tasks.get(str(update.task_uuid))
        status = (update.new_status or "").lower()
        if task is not None and status in UPDATABLE_STATUS:
            found[task.task_id] = f"which this blueprint's update_tasks sets to {status}"
    return found


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
        task = tasks.get(str(update.task_uuid))
        if task is None:
            problems.append(f"update of task {update.task_uuid}: no such task in this graph")
            continue
        name = f"update of task {task.task_id!r}"
        if update.new_status is not None and update.new_status.lower() not in UPDATABLE_STATUS:
            problems.append(
                f"{name}: new_status must be one of {sorted(UPDATABLE_STATUS)}, got {update.new_status!r}"
            )
        if update.new_input_data is None and update.new_status is None:
            problems.append(f"{name}: give new_input_data or new_status")
    return problems


def _started_problems(updates: Iterable[TaskUpdate], tasks: dict[str, GraphTask]) -> list[str]:
    """Updates of tasks that have started: a rollback changes those (409, not a bad blueprint)."""
    problems = []
    for update in updates:
        task = tasks.get(str(update.task_uuid))
        if task is not None and task.status not in NOT_STARTED:
            problems.append(
                f"update of task {task.task_id!r}: it is {task.status}; update_tasks changes tasks that "
                "have not started (pending, ready or waiting at their gate); roll it back with "
                "ROLLBACK_AND_MODIFY (new_input_data) to change it"
            )
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
