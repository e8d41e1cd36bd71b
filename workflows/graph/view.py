"""How a graph looks from outside: its view (a page of tasks), a Mermaid diagram, Web UI details.

Pure functions of the graph state, called from queries and workflow code. Search attribute
upserts are commands (`search_attributes`): changing when they are upserted needs
`versioning.patched`; current details are not in history and may change freely.
"""

from __future__ import annotations

from typing import Any

from temporalio import workflow
from temporalio.common import SearchAttributeUpdate, TypedSearchAttributes

with workflow.unsafe.imports_passed_through():
    from contracts import (
        FINISHED_TASK,
        EdgeStatus,
        GateAsk,
        GraphConfig,
        GraphQuery,
        GraphStatus,
        GraphTask,
        GraphView,
        InteractionRequest,
        TaskStatus,
        TaskView,
    )
    from contracts.asks import summary_of

    from .state import GraphState

from ..identity import search_attributes as keys
from ..identity.ids import run_of_interaction, task_run_workflow_id
from .rules.progress import current

SHAPES = {
    TaskStatus.PENDING: "pending",
    TaskStatus.WAITING: "waiting",
    TaskStatus.READY: "ready",
    TaskStatus.RUNNING: "running",
    TaskStatus.COMPLETED: "completed",
    TaskStatus.FAILED: "failed",
    TaskStatus.SKIPPED: "skipped",
    TaskStatus.CANCELLED: "cancelled",
}
CLASS_STYLES = {
    "pending": "fill:#eeeeee,stroke:#999999",
    "waiting": "fill:#fff3cd,stroke:#d39e00",
    "ready": "fill:#e7f1ff,stroke:#0d6efd",
    "running": "fill:#cfe2ff,stroke:#0d6efd",
    "completed": "fill:#d1e7dd,stroke:#198754",
    "failed": "fill:#f8d7da,stroke:#dc3545",
    "skipped": "fill:#f8f9fa,stroke:#adb5bd,stroke-dasharray:4",
    "cancelled": "fill:#e2e3e5,stroke:#6c757d",
}
DIAGRAM_TASKS = 300
"""Tasks a diagram draws at most (a larger graph is summarised)."""


def graph_status(state: GraphState) -> GraphStatus:
    """The graph's status from its state."""
    if state.status in (GraphStatus.COMPLETED, GraphStatus.FAILED, GraphStatus.CANCELLED):
        return GraphStatus(state.status)
    return GraphStatus.PAUSED if state.paused else GraphStatus.RUNNING


def pending_interactions(state: GraphState) -> list[InteractionRequest]:
    """Gates of the graph and tool approvals inside its task runs, oldest first."""
    inside = [request for told in state.task_pending.values() for request in told.pending]
    return sorted([*state.pending, *inside], key=lambda request: request.timestamp)


def asker_of(state: GraphState, interaction_id: str) -> str | None:
    """The task run that asked a pending request this graph shows (None: none of its runs did)."""
    for told in state.task_pending.values():
        if any(r.interaction_id == interaction_id for r in told.pending):
            return told.workflow_id
    return None


def find_interaction(owner_id: str, state: GraphState, interaction_id: str) -> str | None:
    """The workflow an interaction of this graph belongs to (the graph for gates, a task run for
    tool approvals; decided ones too), or None when it is not this graph's."""
    if interaction_id in state.decided or any(r.interaction_id == interaction_id for r in state.pending):
        return owner_id
    for told in state.task_pending.values():
        if any(r.interaction_id == interaction_id for r in told.pending):
            return told.workflow_id
    run = run_of_interaction(interaction_id)
    if run is None:
        return None
    uuid8, version, instance = run
    task = next((t for t in state.tasks.values() if t.task_uuid.startswith(uuid8)), None)
    if task is None or not 1 <= version <= len(task.versions):
        return None
    return task_run_workflow_id(owner_id, task.task_uuid, version, instance)


def task_view(task: GraphTask) -> TaskView:
    """One task's current version, without its history."""
    version = current(task)
    return TaskView(
        task_uuid=task.task_uuid,
        task_id=task.task_id,
        parent_task_id=task.definition.parent_task_id,
        status=task.status,
        version=version.version if version else 0,
        assignee_id=version.assignee_id if version else task.next_assignee_id or task.definition.assignee_id,
        paused=task.paused,
        reason=task.reason,
        output=version.output if version else None,
        artifact=version.artifact if version else None,
        workflow_id=version.workflow_id if version else None,
        started_at=version.started_at if version else None,
        finished_at=version.finished_at if version else None,
        instances=len(version.instances) if version else 0,
    )


def sink_outputs(state: GraphState, uuids: list[str]) -> dict[str, Any]:
    """Outputs of the completed tasks among `uuids` that no edge leaves: the graph's results."""
    sources = {edge.source for edge in state.edges}
    outputs: dict[str, Any] = {}
    for uuid in uuids:
        task = state.tasks[uuid]
        version = current(task)
        if uuid not in sources and task.status == TaskStatus.COMPLETED and version is not None:
            outputs[task.task_id] = version.output
    return outputs


def graph_view(workflow_id: str, config: GraphConfig, state: GraphState, query: GraphQuery) -> GraphView:
    """The graph as people see it, with one page of its tasks."""
    page = state.order[query.offset : query.offset + query.limit]
    on_page = set(page)
    counts: dict[str, int] = {}
    for task in state.tasks.values():
        counts[task.status] = counts.get(task.status, 0) + 1
    return GraphView(
        graph_id=config.graph_id,
        workflow_id=workflow_id,
        status=graph_status(state),
        created_at=state.created_at,
        finished_at=state.finished_at,
        requested_by=config.requested_by,
        counts=counts,
        total_tasks=len(state.order),
        offset=query.offset,
        tasks=[task_view(state.tasks[uuid]) for uuid in page],
        edges=[edge for edge in state.edges if edge.source in on_page or edge.target in on_page],
        pending_interactions=pending_interactions(state),
        outputs=sink_outputs(state, page),
        reason=state.reason,
    )


def _label(task: GraphTask) -> str:
    version = current(task)
    text = f"{task.task_id}<br/>{task.status}"
    if version is not None and version.version > 1:
        text += f" v{version.version}"
    if version is not None and version.instances:
        done = sum(i.status == TaskStatus.COMPLETED for i in version.instances)
        text += f" {done}/{len(version.instances)}"
    if task.paused:
        text += " (paused)"
    return text.replace('"', "'")


def mermaid(state: GraphState) -> str:
    """A Mermaid flowchart: each task with its status (a style per status), each edge with its state."""
    lines = ["flowchart TD"]
    names = {uuid: f"t{index}" for index, uuid in enumerate(state.order)}
    drawn = state.order[:DIAGRAM_TASKS]
    for uuid in drawn:
        task = state.tasks[uuid]
        lines.append(f'    {names[uuid]}["{_label(task)}"]:::{SHAPES[task.status]}')
    shown = set(drawn)
    for edge in state.edges:
        if edge.source not in shown or edge.target not in shown:
            continue
        label = edge.condition.expression if edge.condition else ""
        if edge.status == EdgeStatus.ERROR:
            label = f"error: {edge.error or ''}"[:80]
        arrow = (
            "-.->"
            if edge.status == EdgeStatus.NOT_TAKEN
            else "==>"
            if edge.status == EdgeStatus.TAKEN
            else "-->"
        )
        safe = label.replace("|", "/").replace('"', "'")
        text = f"|{safe}|" if label else ""
        lines.append(f"    {names[edge.source]} {arrow}{text} {names[edge.target]}")
    for uuid in drawn:  # a task split from another: a dotted line from where it came from
        parent = state.tasks[uuid].definition.parent_task_id
        source = next((u for u in drawn if state.tasks[u].task_id == parent), None) if parent else None
        if source is not None:
            lines.append(f"    {names[source]} -. split .-> {names[uuid]}")
    if len(state.order) > DIAGRAM_TASKS:
        lines.append(f'    more["… {len(state.order) - DIAGRAM_TASKS} more tasks"]')
    lines += [f"    classDef {name} {style}" for name, style in CLASS_STYLES.items()]
    return "\n".join(lines)


def asks(request: InteractionRequest) -> str:
    """What an interaction asks, in a few words (a gate's prompt, else `asks.summary_of`)."""
    ask = request.ask
    return ask.prompt if isinstance(ask, GateAsk) and ask.prompt else summary_of(ask)


def details_markdown(workflow_id: str, config: GraphConfig, state: GraphState) -> str:
    """Current details for the Web UI: counts, what waits for a person, what failed (a list, set
    apart from the first line by a blank one: else the Web UI shows its dashes as that line's text)."""
    done = sum(task.status in FINISHED_TASK for task in state.tasks.values())
    head = f"**Graph** `{config.graph_id}` · {graph_status(state)} · {done}/{len(state.tasks)} tasks finished"
    items = []
    running = [t.task_id for t in state.tasks.values() if t.status == TaskStatus.RUNNING]
    if running:
        items.append(f"- running: {', '.join(f'`{name}`' for name in running[:20])}")
    for request in pending_interactions(state)[:20]:
        items.append(
            f"- **waiting** `{request.interaction_id}`: {asks(request)}"
            f" (may decide: {', '.join(request.approvers) or 'anyone'})"
        )
    failed = [t for t in state.tasks.values() if t.status == TaskStatus.FAILED]
    for task in failed[:10]:
        items.append(f"- **failed** `{task.task_id}`: {task.reason}")
    return "\n".join([head, "", *items] if items else [head])


def search_attributes(config: GraphConfig, state: GraphState) -> list[SearchAttributeUpdate[Any]]:
    """SynapseStatus, SynapsePending and SynapseChannel of the graph."""
    return _shown(config, graph_status(state), len(pending_interactions(state)))


def start_search_attributes(config: GraphConfig) -> TypedSearchAttributes:
    """What a graph run shows first (running, nothing pending, its channel; its project, set here
    only), for its start to set."""
    return keys.at_start([*_shown(config, GraphStatus.RUNNING, 0), *keys.project_of(config.project)])


def _shown(config: GraphConfig, status: GraphStatus, pending: int) -> list[SearchAttributeUpdate[Any]]:
    return [
        keys.STATUS.value_set(status.value),
        keys.PENDING.value_set(pending),
        keys.CHANNEL.value_set(config.channel),
    ]


class WebUI:
    """What the Temporal Web UI shows of one graph: search attributes, upserted only when the
    status or the number of waiting requests changed (each upsert is a command), and the current
    details (not in history)."""

    def __init__(self, owner_id: str, config: GraphConfig, state: GraphState) -> None:
        self._owner_id = owner_id
        self._config = config
        self._state = state
        self._shown: tuple[str, int] = ("", -1)

    def show(self) -> None:
        """Upsert the search attributes if what they say changed; redraw the details."""
        shown = (graph_status(self._state).value, len(pending_interactions(self._state)))
        if shown != self._shown:
            self._shown = shown
            keys.upsert(search_attributes(self._config, self._state))
        self.refresh()

    def refresh(self) -> None:
        """Redraw the current details (pending requests, what runs, what failed)."""
        workflow.set_current_details(details_markdown(self._owner_id, self._config, self._state))
