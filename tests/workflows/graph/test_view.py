"""What people see of a graph: tasks split from another say so, in the view and the diagram."""

from __future__ import annotations

from contracts import GraphConfig, GraphQuery
from workflows.graph import view

from .script import build


def test_a_task_split_from_another_names_it_and_the_diagram_draws_where_it_came_from() -> None:
    scheduler = build(
        {
            "new_tasks": [
                {"task_id": "plan", "assignee_id": "Agent:demo", "input_data": {}},
                {"task_id": "left", "assignee_id": "Agent:demo", "input_data": {}, "parent_task_id": "plan"},
                {"task_id": "right", "assignee_id": "Agent:demo", "input_data": {}, "parent_task_id": "plan"},
                {"task_id": "join", "assignee_id": "Agent:demo", "input_data": {}},
            ],
            "new_edges": [
                {"source_task_id": "left", "target_task_id": "join"},
                {"source_task_id": "right", "target_task_id": "join"},
            ],
        }
    )
    seen = view.graph_view(
        "graph:g", GraphConfig(graph_id="g", requested_by="alice"), scheduler.state, GraphQuery()
    )
    assert {t.task_id: t.parent_task_id for t in seen.tasks} == {
        "plan": None,
        "left": "plan",
        "right": "plan",
        "join": None,
    }
    lines = view.mermaid(scheduler.state).splitlines()
    assert [line.strip() for line in lines if "split" in line] == ["t0 -. split .-> t1", "t0 -. split .-> t2"]
    assert "    t1 --> t3" in lines and "    t2 --> t3" in lines, "the edges are drawn as before"
