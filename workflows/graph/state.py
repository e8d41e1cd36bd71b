"""The one state model of a graph workflow, carried whole across continue-as-new.

Adding a field (with a default) is safe for running graphs; renaming or removing one breaks the
continue-as-new input of graphs already running.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from pydantic import BaseModel, ConfigDict, Field
from temporalio.contrib.workflow_streams import WorkflowStreamState

from contracts import (
    AgentSpec,
    ArchiveCursor,
    BlueprintChange,
    GraphConfig,
    GraphEdge,
    GraphIntervention,
    GraphTask,
    PlanBlueprint,
    TaskInteractions,
)

from ..supervision.state import SupervisedState

GRAPH_TASK_TIMEOUT = timedelta(seconds=60)
"""A graph's workflow task timeout (Temporal's default is 10 s), kept across continue-as-new.

A graph replays its whole history after its worker restarts or a workflow task fails (the server
refusing a continue-as-new because reports arrived meanwhile is ordinary for a busy graph). Such a
replay runs as one workflow task: measured at about 2 ms per event on a starved 2-core machine, a
4,000-event graph took 9.5 s, so under 10 s it timed out, replayed again, and stayed stuck."""

GRAPH_EVENTS = 4_000
"""History events after which a graph continues as new (`continue_as_new_after_events`): its
replay stays well within `GRAPH_TASK_TIMEOUT`."""


class GraphState(SupervisedState):
    """Everything a graph knows; the workflow's only mutable state."""

    model_config = ConfigDict(extra="forbid")

    created_at: datetime
    finished_at: datetime | None = None
    status: str = "running"
    reason: str | None = None
    tasks: dict[str, GraphTask] = Field(default_factory=dict)
    order: list[str] = Field(default_factory=list)
    edges: list[GraphEdge] = Field(default_factory=list)
    next_edge: int = 1
    task_pending: dict[str, TaskInteractions] = Field(default_factory=dict)
    """Interactions waiting inside task runs, by the run's workflow id."""
    agents: dict[str, AgentSpec] = Field(default_factory=dict)
    """Every assignee of the graph resolved to its declaration (the `resolve_agents` activity)."""
    holds: list[str] = Field(default_factory=list)
    """Tasks a rollback is resetting (neither resolved nor started until their old runs ended)."""
    rolling_back: str | None = None
    """The rollback in flight (its task and who asked), while it holds `holds`."""
    cancelling: list[str] = Field(default_factory=list)
    """Runs (workflow ids) asked to cancel whose end has not been reported yet."""
    stream_archive: ArchiveCursor = Field(default_factory=ArchiveCursor)


class Reopening(BaseModel):
    """A closed graph taken up again: the change a person asked for on its final state."""

    model_config = ConfigDict(extra="forbid")

    principal: str
    reason: str
    previous_run_id: str
    intervention: GraphIntervention | None = None
    change: BlueprintChange | None = None


class GraphRunInput(BaseModel):
    """Input of `TaskGraphWorkflow.run`: the config and blueprint, or the state carried over."""

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    config: GraphConfig
    blueprint: PlanBlueprint | None = None
    agents: dict[str, AgentSpec] = Field(
        default_factory=dict, description="The blueprint's assignees, resolved by whoever submitted it."
    )
    task_uuids: dict[str, str] = Field(
        default_factory=dict, description="Engine UUIDs the submitter chose for the blueprint's tasks."
    )
    state: GraphState | None = None
    stream: WorkflowStreamState | None = None
    reopening: Reopening | None = Field(
        default=None, description="Set when a closed graph is reopened: `state` is its final state."
    )
    continue_as_new_after_events: int = Field(
        default=GRAPH_EVENTS,
        gt=0,
        description="Continue-as-new once history reaches this many events, if the server has not "
        "suggested it sooner (tests lower it).",
    )
    generation: int | None = Field(
        default=None,
        description="The code generation the run takes (`workflows.versioning`; 1 is 1.0); set by "
        "Synapse's starters. None: decided by a marker per change when the run starts.",
    )
