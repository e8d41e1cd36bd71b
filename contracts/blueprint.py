"""Workflow blueprints and task directives."""

from __future__ import annotations

from typing import Any, Literal
from uuid import UUID

from pydantic import Field, StrictInt

from .base import Contract


class Condition(Contract):
    """A condition on a graph edge, evaluated over the source task's output."""

    evaluator: Literal["CEL"] = Field(description="Expression language; only CEL is supported.")
    expression: str = Field(
        description="CEL expression over `output` (the source task's output) and `source` "
        "(`{task_id, status, version}`); the edge is followed when it is true."
    )


class LoopDirective(Contract):
    """Expands a task template over a list taken from a source task's output."""

    type: Literal["PARALLEL_ITERATION", "SERIAL_ITERATION"] = Field(
        description="Run the instances in parallel or one after another."
    )
    iteration_input_key: str = Field(
        description="Key under which each item is placed in an instance's `input_data`."
    )
    input_source_task_id: str = Field(
        description="Blueprint task id whose output supplies the list to iterate over."
    )
    task_template: TaskDefinition = Field(description="The task run once per item.")
    max_iterations: StrictInt | None = Field(
        default=None, description="Upper bound on the number of instances; no bound when unset."
    )


class TaskDirectives(Contract):
    """Instructions to the graph engine about how to run one task."""

    loop_directive: LoopDirective | None = Field(
        default=None, description="Expand this task over a list instead of running it once."
    )
    on_failure: dict[str, Any] | None = Field(
        default=None,
        description='What to do when the task fails, e.g. `{"type": "GOTO", "target_task_id": "..."}`.',
    )
    timeout_seconds: StrictInt | None = Field(
        default=None, description="Bound on the task's run time, in seconds."
    )
    human_interaction: dict[str, Any] | None = Field(
        default=None, description="Gate the task behind a human approval (who, prompt, timeout)."
    )


class DataFlow(Contract):
    """Copies values from a source task's output into the target task's input."""

    mappings: dict[str, str] = Field(description='`{target_input_key: "output.path.to.value"}` pairs.')


class ContextOverrides(Contract):
    """Per-task adjustments to the context an agent is given."""

    priority: Literal["NORMAL", "HIGHEST"] = Field(
        default="NORMAL", description="Scheduling priority of the task."
    )
    include_assets: list[dict[str, Any]] | None = Field(
        default=None, description="Extra assets to put in the agent's context."
    )
    include_task_results: list[str] | None = Field(
        default=None, description="Blueprint task ids whose outputs go into the context."
    )
    ad_hoc_text: str | None = Field(default=None, description="Free text added to the agent's context.")
    override_context_config: dict[str, Any] | None = Field(
        default=None, description="Replaces fields of the agent's ContextBuildConfig."
    )


class TaskDefinition(Contract):
    """One task of a blueprint."""

    task_id: str = Field(description="Local id of the task inside this blueprint.")
    parent_task_id: str | None = Field(
        default=None, description="Local id of the task this one was split from, if any."
    )
    input_data: dict[str, Any] = Field(description="The task's inputs (replaces a single goal).")
    assignee_id: str = Field(
        description="Who runs the task: `Agent:<name>` or `Group:<name>`.",
        pattern=r"^(Agent|Group):.+$",
    )
    context_overrides: ContextOverrides | None = Field(
        default=None, description="Adjustments to the context the assignee is given."
    )
    directives: TaskDirectives | None = Field(
        default=None, description="Loop, failure, timeout and approval directives."
    )


class EdgeDefinition(Contract):
    """A dependency between two blueprint tasks."""

    source_task_id: str = Field(description="Task that must finish first.")
    target_task_id: str = Field(description="Task that waits for the source.")
    condition: Condition | None = Field(
        default=None, description="Follow the edge only when this is true; always when unset."
    )
    data_flow: DataFlow | None = Field(
        default=None, description="Values copied from the source's output into the target's input."
    )


class TaskUpdate(Contract):
    """A change to a task that already exists in a running graph."""

    task_uuid: UUID = Field(
        alias="task_id", description="Engine-assigned UUID of the task to change (seed name `task_id`)."
    )
    new_input_data: dict[str, Any] | None = Field(default=None, description="Replacement input data.")
    new_status: str | None = Field(default=None, description="Status to set on the task.")


class PlanBlueprint(Contract):
    """Declares a task graph to create, or an extension of a running one."""

    workflow_id: UUID | None = Field(
        default=None, description="Graph to extend; a new graph is created when unset."
    )
    new_tasks: list[TaskDefinition] = Field(default_factory=list, description="Tasks to add.")
    new_edges: list[EdgeDefinition] = Field(default_factory=list, description="Edges to add.")
    update_tasks: list[TaskUpdate] = Field(default_factory=list, description="Changes to existing tasks.")


LoopDirective.model_rebuild()
