"""What a graph task's agent is given: ad-hoc text, other tasks' results, the task list, its
context configuration overridden, and Temporal priority; and how graphs and tasks are found."""

from __future__ import annotations

from temporalio.client import Client

from contracts import GraphStatus
from workflows.graph import AgentTaskWorkflow
from workflows.identity import search_attributes

from ...conftest import assert_eventually
from .flows import by_id, edge, finished, start_graph, task


async def test_context_overrides_reach_the_agent_and_priority_reaches_temporal(
    client: Client, worker: None, task_queue: str
) -> None:
    handle = await start_graph(
        client,
        task_queue,
        {
            "new_tasks": [
                task("facts", input_data={"echo": {"revenue": 120}}),
                task("skipped_one"),
                task(
                    "summary",
                    input_data={},
                    context_overrides={
                        "priority": "HIGHEST",
                        "ad_hoc_text": "Answer in one sentence.",
                        "include_task_results": ["facts"],
                        "override_context_config": {"task_list_config": {"status_in": ["completed"]}},
                    },
                ),
            ],
            "new_edges": [
                edge("facts", "summary"),
                edge(
                    "facts", "skipped_one", condition={"evaluator": "CEL", "expression": "output.revenue < 0"}
                ),
            ],
        },
    )
    result = await finished(handle)
    assert result.status == GraphStatus.COMPLETED
    summary_run = by_id(result)["summary"].workflow_id
    assert summary_run is not None
    shown = await client.get_workflow_handle(summary_run).query(AgentTaskWorkflow.get_messages)
    context = {m.metadata["context_source"]: m.content for m in shown if m.role == "system"}
    assert context["ad_hoc_text"] == "Answer in one sentence."
    assert context["task_result"] == "Result of task 'facts': {\"revenue\": 120}"
    assert context["task_list"].startswith("Tasks of this graph:\n- facts (completed, Agent:demo)")
    assert "skipped_one" not in context["task_list"], "status_in keeps only completed tasks"
    description = await client.get_workflow_handle(summary_run).describe()
    assert description.raw_description.workflow_execution_info.priority.priority_key == 1
    facts_run = by_id(result)["facts"].workflow_id
    assert facts_run is not None
    other = await client.get_workflow_handle(facts_run).describe()
    assert other.raw_description.workflow_execution_info.priority.priority_key != 1


async def test_every_task_run_of_a_graph_is_found_by_its_parent(
    client: Client, worker: None, task_queue: str
) -> None:
    handle = await start_graph(client, task_queue, {"new_tasks": [task("one"), task("two")]})
    result = await finished(handle)
    runs = {t.workflow_id for t in result.tasks}

    async def found() -> set[str | None]:
        query = f"ParentWorkflowId = '{result.workflow_id}'"
        return {w.id async for w in client.list_workflows(query)}

    await assert_eventually(found, lambda ids: ids == runs, what="the task runs listed by their graph")
    graphs = [w.id async for w in client.list_workflows(f"WorkflowId = '{result.workflow_id}'")]
    described = await client.get_workflow_handle(graphs[0]).describe()
    assert described.typed_search_attributes.get(search_attributes.STATUS) == "completed"
