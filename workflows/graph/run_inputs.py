"""What a task run is given: its inputs, its agent (with the task's context overrides) and its context.

`run_input` builds the `AgentTaskInput` of one run from the graph state: a task's current version,
or one loop instance (`instance_input`: the template's input, the loop's and the item; run by
the version's assignee, the template's unless a rollback named another). The
context is a few system messages: the blueprint's `ad_hoc_text`, the outputs named by
`include_task_results`, and the graph's task list when the agent's `task_list_config` asks for it
(`status_in` filters it). Pure functions of the state.
"""

from __future__ import annotations

import json
from typing import Any

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from contracts import (
        AgentContextConfig,
        AgentSpec,
        AgentTaskInput,
        ContextOverrides,
        GraphConfig,
        GraphTask,
        TaskDefinition,
        UniversalMessage,
    )

    from .state import GraphState

from ..versioning import GENERATION
from .rules.progress import Run, current

TASK_LIST_MAX = 100
"""Tasks a task-list context shows at most."""
RESULT_CHARS = 4000
"""Characters of one included task result."""


def _system(text: str, source: str) -> UniversalMessage:
    return UniversalMessage(role="system", content=text, metadata={"context_source": source})


def _shown(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return (
        text
        if len(text) <= RESULT_CHARS
        else f"{text[:RESULT_CHARS]}… ({len(text) - RESULT_CHARS:,} more characters)"
    )


def with_overrides(agent: AgentSpec | None, overrides: ContextOverrides | None) -> AgentSpec | None:
    """The agent with `override_context_config` laid over its context configuration."""
    if agent is None or overrides is None or not overrides.override_context_config:
        return agent
    merged = {**agent.context.model_dump(), **overrides.override_context_config}
    merged.pop("task_id", None)
    return agent.model_copy(update={"context": AgentContextConfig.model_validate(merged)})


def _row(task: GraphTask) -> str:
    version = current(task)
    assignee = version.assignee_id if version is not None else task.definition.assignee_id
    row = f"- {task.task_id} ({task.status}, {assignee})"
    if version is not None and version.output is not None:
        row += f": {_shown(version.output)[:200]}"
    return row


def context_messages(
    state: GraphState, task: GraphTask, definition: TaskDefinition, agent: AgentSpec | None
) -> list[UniversalMessage]:
    """The system messages a run of `task` starts with."""
    messages: list[UniversalMessage] = []
    overrides = definition.context_overrides or task.definition.context_overrides
    if overrides and overrides.ad_hoc_text:
        messages.append(_system(overrides.ad_hoc_text, "ad_hoc_text"))
    for task_id in (overrides.include_task_results or []) if overrides else []:
        other = next((t for t in state.tasks.values() if t.task_id == task_id), None)
        version = current(other) if other is not None else None
        shown = (
            _shown(version.output)
            if version is not None and version.output is not None
            else f"(no output yet: {other.status if other else 'unknown'})"
        )
        messages.append(_system(f"Result of task {task_id!r}: {shown}", "task_result"))
    listing = agent.context.task_list_config if agent is not None else None
    if listing is not None:
        wanted = {str(s).lower() for s in listing.get("status_in", [])}
        rows = [
            _row(task)
            for task in (state.tasks[uuid] for uuid in state.order)
            if not wanted or task.status.value in wanted
        ]
        more = f"\n… {len(rows) - TASK_LIST_MAX} more" if len(rows) > TASK_LIST_MAX else ""
        messages.append(
            _system("Tasks of this graph:\n" + "\n".join(rows[:TASK_LIST_MAX]) + more, "task_list")
        )
    return messages


def run_input(
    graph_workflow_id: str, config: GraphConfig, state: GraphState, run: Run, agents: dict[str, AgentSpec]
) -> AgentTaskInput:
    """The input of one run: a task's current version, or one of its loop instances."""
    task = state.tasks[run.task_uuid]
    version = current(task)
    assert version is not None
    definition = task.definition
    input_data = version.input_data
    assignee_id = version.assignee_id
    if run.instance is not None:
        loop = definition.directives.loop_directive if definition.directives else None
        assert loop is not None
        definition = loop.task_template
        item = version.instances[run.instance].item
        input_data = instance_input(definition, version.input_data, loop.iteration_input_key, item)
    directives = definition.directives or task.definition.directives
    agent = with_overrides(
        agents.get(assignee_id), definition.context_overrides or task.definition.context_overrides
    )
    return AgentTaskInput(
        graph_workflow_id=graph_workflow_id,
        task_uuid=task.task_uuid,
        task_id=task.task_id,
        version=version.version,
        instance=run.instance,
        input_data=input_data,
        agent_id=agent_id_of(assignee_id, agent),
        agent=agent,
        context=context_messages(state, task, definition, agent),
        max_turns=config.max_turns,
        timeout_seconds=directives.timeout_seconds if directives else None,
        approvers=list(config.approvers),
        approval_timeout_seconds=config.approval_timeout_seconds,
        channel=config.channel,
        requested_by=config.requested_by,
        paused=state.paused or task.paused,
        generation=GENERATION,
    )


def instance_input(
    template: TaskDefinition, loop_input: dict[str, Any], key: str, item: Any
) -> dict[str, Any]:
    """A loop instance's input: the template's, then what the loop task was given (its input and
    the data flowing into it, a rollback's new input), then the item under `iteration_input_key`."""
    return {**template.input_data, **loop_input, key: item}


def agent_id_of(assignee_id: str, agent: AgentSpec | None) -> str:
    """`Agent:<name>` of the agent that runs (a group's pick for `Group:<name>`)."""
    return f"Agent:{agent.name}" if agent is not None else assignee_id


def high_priority(task: GraphTask) -> bool:
    """Whether the task asked for `priority: HIGHEST`."""
    overrides = task.definition.context_overrides
    return overrides is not None and overrides.priority == "HIGHEST"
