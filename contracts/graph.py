"""Task graphs: a running PlanBlueprint as people see it, and what a graph and its tasks tell
each other.

A graph (`graph:<uuid>`) holds tasks (each with an engine UUID, its blueprint-local `task_id` and
every version it ran) and edges (with the state of their condition). Each task version runs as a
child workflow that reports back with a `TaskReport`.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import Field, StrictInt

from .agents import AgentSpec
from .artifacts import ArtifactRef
from .base import Contract
from .blueprint import Condition, DataFlow, PlanBlueprint, TaskDefinition
from .events import TaskChanged
from .intervention import InterventionRequest
from .messages import UniversalMessage
from .principals import PersonId
from .statuses import EdgeStatus, GraphStatus, TaskStatus
from .streaming import InteractionOutcome, InteractionRequest

FINISHED_TASK = (TaskStatus.COMPLETED, TaskStatus.FAILED, TaskStatus.SKIPPED, TaskStatus.CANCELLED)

ENDED_OUTSIDE = (GraphStatus.TERMINATED, GraphStatus.TIMED_OUT)
"""How a graph reads whose workflow Temporal ended while it ran (besides `failed`): reopened,
like a failed graph, by a rollback or a blueprint, from its last good state."""


class LoopInstance(Contract):
    """One instance of a loop task: the template run with one item."""

    index: int = Field(ge=0, description="Position of its item in the list.")
    item: Any = Field(default=None, description="The item (placed in `input_data[iteration_input_key]`).")
    status: TaskStatus = Field(default=TaskStatus.PENDING, description="Where it is.")
    output: Any = Field(
        default=None, description="Its output when completed (a preview when `artifact` is set)."
    )
    artifact: ArtifactRef | None = Field(default=None, description="Its whole output, when it was large.")
    error: str | None = Field(default=None, description="Why it failed, was skipped or cancelled.")
    workflow_id: str | None = Field(default=None, description="Its child workflow.")
    gate_interaction: str | None = Field(
        default=None, description="Its open gate (the template's `human_interaction`), if any."
    )


class TaskVersion(Contract):
    """One run of a task; a rollback adds a version and keeps the old ones."""

    version: int = Field(ge=1, description="1 for the first run, then one more per rollback.")
    input_data: dict[str, Any] = Field(description="The inputs it ran with (data flow included).")
    assignee_id: str = Field(description="Who ran it.")
    status: TaskStatus = Field(description="How it went.")
    output: Any = Field(default=None, description="The agent's answer (a preview when `artifact` is set).")
    artifact: ArtifactRef | None = Field(default=None, description="The whole output, when it was large.")
    error: str | None = Field(default=None, description="Why it failed or was cancelled.")
    workflow_id: str | None = Field(default=None, description="Its child workflow (loops: one per instance).")
    started_at: datetime | None = Field(default=None, description="When it started (UTC).")
    finished_at: datetime | None = Field(default=None, description="When it finished (UTC).")
    superseded: bool = Field(default=False, description="A rollback replaced it; kept for the record.")
    instances: list[LoopInstance] = Field(default_factory=list, description="A loop task's instances.")


class GraphTask(Contract):
    """One task of a graph, with every version it ran."""

    task_uuid: str = Field(description="Engine id (interventions and `TaskUpdate.task_id` use it).")
    task_id: str = Field(description="Its id in the blueprint that added it.")
    definition: TaskDefinition = Field(description="What the blueprint (or a later update) said.")
    status: TaskStatus = Field(default=TaskStatus.PENDING, description="Where it is now.")
    paused: bool = Field(default=False, description="Held by a PAUSE: starts nothing new.")
    reason: str | None = Field(default=None, description="Why it is skipped, failed or waiting.")
    goto_only: bool = Field(
        default=False, description="A GOTO target with no incoming edge: runs only when a task fails to it."
    )
    next_input: dict[str, Any] | None = Field(
        default=None, description="Inputs its next version starts from (rollback, GOTO, plan update)."
    )
    next_assignee_id: str | None = Field(default=None, description="Assignee of its next version.")
    input_override: dict[str, Any] | None = Field(
        default=None,
        description="A rollback's `new_input_data`: laid over its next version's input after data flow.",
    )
    summoned: bool = Field(
        default=False,
        description="Its next run was asked for (a rollback or an on_failure GOTO): it waits for its "
        "incoming edges to resolve, but they cannot skip it.",
    )
    goto_attempts: int = Field(default=0, description="Times its on_failure GOTO was followed.")
    failed_over_to: str | None = Field(
        default=None, description="UUID of the task its failure continued at (on_failure GOTO)."
    )
    gate_interaction: str | None = Field(default=None, description="Its open gate's interaction id.")
    added_by: PersonId = Field(default="system", description="Who added it (a person, or `Agent:<name>`).")
    versions: list[TaskVersion] = Field(default_factory=list, description="Every run, oldest first.")


class GraphEdge(Contract):
    """A dependency between two graph tasks, with the state of its condition."""

    edge_id: str = Field(description="Engine id of the edge.")
    source: str = Field(description="Source task UUID.")
    target: str = Field(description="Target task UUID.")
    source_task_id: str = Field(description="Source's blueprint id.")
    target_task_id: str = Field(description="Target's blueprint id.")
    condition: Condition | None = Field(default=None, description="CEL over `output` and `source`.")
    data_flow: DataFlow | None = Field(default=None, description="Values copied from the source's output.")
    kind: Literal["edge", "loop"] = Field(
        default="edge", description="`loop`: implied by a loop directive's `input_source_task_id`."
    )
    status: EdgeStatus = Field(default=EdgeStatus.WAITING, description="Where it is.")
    error: str | None = Field(default=None, description="Why its condition could not be evaluated.")


class GraphConfig(Contract):
    """How a graph runs; fixed when it starts."""

    graph_id: str = Field(description="The graph's UUID (its workflow id is `graph:<uuid>`).")
    requested_by: PersonId = Field(default="anonymous", description="Who submitted the blueprint.")
    channel: str = Field(default="http", description="Where it was submitted from.")
    approvers: list[PersonId] = Field(
        default_factory=list, description="Who may decide its gates and tool approvals; empty: anyone."
    )
    approval_timeout_seconds: int = Field(
        default=300, gt=0, le=30 * 24 * 3600, description="Default wait of a gate or tool approval."
    )
    max_running_tasks: int = Field(
        default=500,
        gt=0,
        le=1900,
        description="Child workflows in flight at once (below Temporal's 2,000 pending children).",
    )
    parent_session: str | None = Field(
        default=None, description="Workflow id of the session whose agent proposed it (told of progress)."
    )
    max_turns: int = Field(default=10, gt=0, le=100, description="Agent steps a task may take.")
    project: str | None = Field(
        default=None,
        max_length=1000,
        description="The project it works in (its `SynapseProject`); a session's graph has none of "
        "its own: it belongs to its session's.",
    )
    inline_input_bytes: int | None = Field(
        default=None,
        gt=0,
        description="A task run's inputs and context over this many bytes (encoded) go to it by "
        "reference, kept in the artifact store (SYNAPSE_INLINE_BYTES); None: carried whole.",
    )


class GraphSubmission(Contract):
    """Body of `POST /graphs`: a blueprint and who may decide its interactions."""

    blueprint: PlanBlueprint = Field(description="The tasks and edges to run.")
    approvers: list[PersonId] | None = Field(default=None, description="Who may decide; anyone when omitted.")
    approval_timeout_seconds: StrictInt | None = Field(
        default=None, gt=0, le=30 * 24 * 3600, description="Default gate/approval wait; 300 s when omitted."
    )
    principal: PersonId | None = Field(
        default=None, description="Who submits (ignored when the API key names one)."
    )
    project: str | None = Field(
        default=None,
        max_length=1000,
        description="The project the graph works in. A key scoped to projects must name one of them "
        "(or none when it has exactly one: that one).",
    )


class BlueprintChange(Contract):
    """A blueprint that extends a running graph, and who proposes it (the `extend` update)."""

    blueprint: PlanBlueprint = Field(description="New tasks, new edges, updates of existing tasks.")
    principal: PersonId = Field(
        default="anonymous", description="A person, or `Agent:<name>` for an agent's plan."
    )
    channel: str = Field(
        default="system",
        description="Where it came from: `http` for a person's, `system` for an agent's plan.",
    )
    agents: dict[str, AgentSpec] = Field(
        default_factory=dict, description="Its assignees resolved to declarations (set by the engine)."
    )
    task_uuids: dict[str, str] = Field(
        default_factory=dict,
        description="Engine UUIDs chosen by the submitter for new tasks (by blueprint id).",
    )


class GraphIntervention(InterventionRequest):
    """An `InterventionRequest` and who sends it (the `intervene` signal and update)."""

    principal: PersonId = Field(default="anonymous", description="Who intervenes.")
    channel: str = Field(default="http", description="Where from.")


class GraphControl(Contract):
    """Body of `POST /graphs/{id}/pause|resume|cancel` (all optional)."""

    reason: str | None = Field(default=None, description="Why; recorded in the audit trail.")
    principal: PersonId | None = Field(default=None, description="Who (ignored when the API key names one).")


class AgentTaskInput(Contract):
    """Input of `AgentTaskWorkflow`: one version (or loop instance) of one graph task."""

    graph_workflow_id: str = Field(description="The graph to report to.")
    task_uuid: str = Field(description="The task's engine id.")
    task_id: str = Field(description="The task's blueprint id.")
    version: int = Field(ge=1, description="Which version this run is.")
    instance: int | None = Field(default=None, description="Loop instance index, if it is one.")
    input_data: dict[str, Any] = Field(description="The task's inputs.")
    agent_id: str = Field(description="`Agent:<name>` that runs it.")
    agent: AgentSpec | None = Field(default=None, description="Its declaration (context overrides applied).")
    context: list[UniversalMessage] = Field(
        default_factory=list, description="What the agent is shown besides the inputs (system messages)."
    )
    max_turns: int = Field(default=10, gt=0, description="Agent steps allowed.")
    timeout_seconds: int | None = Field(default=None, gt=0, description="Bound on the run.")
    approvers: list[PersonId] = Field(default_factory=list, description="Who may decide its tool approvals.")
    approval_timeout_seconds: int = Field(default=300, gt=0, description="Tool approval wait.")
    channel: str = Field(default="http", description="Channel of its requests.")
    requested_by: PersonId | None = Field(
        default=None, description="Who asked for the graph (its requests name them)."
    )
    paused: bool = Field(default=False, description="Start held (the task or graph is paused).")
    generation: int | None = Field(
        default=None,
        description="The code generation the run takes (`workflows.versioning`; 1 is 1.0). None: "
        "decided by a marker per change when the run starts.",
    )
    inputs_ref: ArtifactRef | None = Field(
        default=None,
        description="Its `RunInputs`, kept whole in the artifact store when they were over the inline "
        "size (`input_data` and `context` are then empty): the run reads them back first.",
    )


class RunInputs(Contract):
    """What a task run works on, kept in the artifact store when too large to carry in its start."""

    owner_id: str = Field(description="The graph whose task run it is.")
    name: str = Field(description="Which run: `task <id> v<n>` (`#<k>` for a loop instance).")
    input_data: dict[str, Any] = Field(description="The task's inputs.")
    context: list[UniversalMessage] = Field(default_factory=list, description="Its context messages.")


class TaskReport(Contract):
    """What a task run tells its graph: it finished (the `task_finished` signal)."""

    task_uuid: str = Field(description="The task's engine id.")
    version: int = Field(ge=1, description="The version that ran.")
    instance: int | None = Field(default=None, description="Loop instance index, if it is one.")
    status: Literal["completed", "failed", "cancelled"] = Field(description="How it ended.")
    output: Any = Field(default=None, description="The agent's answer (a preview when `artifact` is set).")
    artifact: ArtifactRef | None = Field(default=None, description="The whole answer, when it was large.")
    error: str | None = Field(default=None, description="Why it failed or was cancelled.")
    plan: PlanBlueprint | None = Field(
        default=None, description="A plan the agent proposed (extends the graph)."
    )
    agent_id: str | None = Field(default=None, description="The agent that answered.")


class TaskInteractions(Contract):
    """A task run's pending interactions (the `task_interactions` signal: sent when they change)."""

    task_uuid: str = Field(description="The task's engine id.")
    workflow_id: str = Field(description="The task run's workflow id (decisions go there).")
    pending: list[InteractionRequest] = Field(default_factory=list, description="What waits for a person.")
    decided: list[InteractionOutcome] = Field(
        default_factory=list,
        description="Decisions taken since the last message (approvals that left `pending`).",
    )


class GraphProgress(Contract):
    """What a graph tells the session that started it (the session's `graph_progress` signal)."""

    graph_workflow_id: str = Field(description="The graph.")
    changes: list[TaskChanged] = Field(default_factory=list, description="Task state changes, in order.")
    pending: list[InteractionRequest] = Field(
        default_factory=list, description="Every gate and tool approval of the graph waiting now."
    )
    decided: list[InteractionOutcome] = Field(
        default_factory=list, description="Decisions taken since the last message."
    )


class TaskView(Contract):
    """One task in a graph's view: its current version, no history (see `GraphTask`)."""

    task_uuid: str = Field(description="Engine id.")
    task_id: str = Field(description="Blueprint id.")
    status: TaskStatus = Field(description="Where it is.")
    version: int = Field(default=0, description="Current version (0: never ran).")
    assignee_id: str = Field(description="Who runs (or ran) it.")
    paused: bool = Field(default=False, description="Held by a PAUSE.")
    reason: str | None = Field(default=None, description="Why it is skipped, failed or waiting.")
    output: Any = Field(default=None, description="Current version's output.")
    artifact: ArtifactRef | None = Field(default=None, description="The whole output, when large.")
    workflow_id: str | None = Field(default=None, description="Current version's child workflow.")
    started_at: datetime | None = Field(default=None, description="Current version's start.")
    finished_at: datetime | None = Field(default=None, description="Current version's end.")
    instances: int = Field(default=0, description="Loop instances of the current version.")
    parent_task_id: str | None = Field(
        default=None, description="Blueprint id of the task this one was split from, if any."
    )


class GraphView(Contract):
    """A graph as people see it (`GET /graphs/{id}`): status, a page of tasks, edges, what waits."""

    graph_id: str = Field(description="The graph's UUID.")
    workflow_id: str = Field(description="`graph:<uuid>`, to look up in the Web UI.")
    status: GraphStatus = Field(description="Where the graph is.")
    created_at: datetime = Field(description="When it started (UTC).")
    finished_at: datetime | None = Field(default=None, description="When it finished (UTC).")
    requested_by: PersonId = Field(description="Who submitted it.")
    counts: dict[str, int] = Field(default_factory=dict, description="Tasks per status.")
    total_tasks: int = Field(description="Tasks in the graph.")
    offset: int = Field(default=0, description="Index of the first task of this page.")
    tasks: list[TaskView] = Field(default_factory=list, description="A page of tasks, in the order added.")
    edges: list[GraphEdge] = Field(default_factory=list, description="Edges between the tasks of the page.")
    pending_interactions: list[InteractionRequest] = Field(
        default_factory=list, description="Gates and tool approvals waiting for a person."
    )
    outputs: dict[str, Any] = Field(
        default_factory=dict, description="Outputs of the finished tasks nothing depends on, by blueprint id."
    )
    reason: str | None = Field(
        default=None, description="Why it failed, was cancelled, terminated or timed out."
    )


class GraphSummary(Contract):
    """One graph in `GET /graphs`, from Temporal's visibility (its search attributes)."""

    graph_id: str = Field(description="The graph's UUID.")
    workflow_id: str = Field(description="`graph:<uuid>`.")
    title: str | None = Field(
        default=None,
        description="What to call it: its first task and how many more (`fetch and 2 more tasks`), or "
        "the session that started it (`from session:demo`).",
    )
    status: str = Field(
        description="Where it is: running, paused, completed, failed, cancelled, terminated, timed_out."
    )
    pending: int = Field(default=0, description="Gates and tool approvals waiting for a person.")
    channel: str | None = Field(default=None, description="Where it was started from.")
    started_at: datetime | None = Field(default=None, description="When its first run started (UTC).")
    closed: bool = Field(default=False, description="Its current run has ended (it may still be reopened).")
    reason: str | None = Field(
        default=None,
        description="How its workflow ended, when Temporal ended it while it ran (terminated, "
        "timed out, failed outside Synapse's code).",
    )


class GraphQuery(Contract):
    """A page of a graph's tasks (the `get_state` query)."""

    offset: int = Field(default=0, ge=0, description="First task index.")
    limit: int = Field(default=100, ge=1, le=1000, description="At most this many tasks.")


class GraphCreated(Contract):
    """Answer of `POST /graphs`."""

    graph_id: str = Field(description="The graph's UUID.")
    workflow_id: str = Field(description="`graph:<uuid>`.")
    tasks: dict[str, str] = Field(default_factory=dict, description="Blueprint task id → engine UUID.")
    status: GraphStatus = Field(description="Where it is now.")
