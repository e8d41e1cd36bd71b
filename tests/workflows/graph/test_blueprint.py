"""Accepting blueprints: what is added, and every refusal naming its task, edge or expression."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from contracts import GraphTask, PlanBlueprint, TaskStatus, TaskVersion
from workflows.graph.blueprint import BlueprintRefused, Expansion, assignees_of, expand
from workflows.graph.cel import Conditions


def task(task_id: str, **extra: Any) -> dict[str, Any]:
    return {"task_id": task_id, "input_data": {"echo": task_id}, "assignee_id": "Agent:demo", **extra}


def edge(source: str, target: str, **extra: Any) -> dict[str, Any]:
    return {"source_task_id": source, "target_task_id": target, **extra}


def accept(blueprint: dict[str, Any], tasks: dict[str, GraphTask] | None = None) -> Expansion:
    ids = (f"uuid-{n}" for n in itertools.count(1))
    return expand(
        PlanBlueprint.model_validate(blueprint),
        tasks=tasks or {},
        edges=[],
        new_id=lambda _local: next(ids),
        next_edge=1,
        principal="alice",
        conditions=Conditions(),
    )


def refusals(blueprint: dict[str, Any], tasks: dict[str, GraphTask] | None = None) -> list[str]:
    with pytest.raises(BlueprintRefused) as refused:
        accept(blueprint, tasks)
    return refused.value.problems


def test_a_diamond_gets_engine_ids_and_edges() -> None:
    added = accept(
        {
            "new_tasks": [task("a"), task("b"), task("c"), task("d")],
            "new_edges": [edge("a", "b"), edge("a", "c"), edge("b", "d"), edge("c", "d")],
        }
    )
    assert added.ids == {"a": "uuid-1", "b": "uuid-2", "c": "uuid-3", "d": "uuid-4"}
    assert [(e.edge_id, e.source, e.target) for e in added.edges] == [
        ("e1", "uuid-1", "uuid-2"),
        ("e2", "uuid-1", "uuid-3"),
        ("e3", "uuid-2", "uuid-4"),
        ("e4", "uuid-3", "uuid-4"),
    ]
    assert all(t.added_by == "alice" and t.status == TaskStatus.PENDING for t in added.tasks)


def test_a_loop_depends_on_its_source_by_an_implied_edge() -> None:
    loop = {
        "loop_directive": {
            "type": "PARALLEL_ITERATION",
            "iteration_input_key": "item",
            "input_source_task_id": "list",
            "task_template": task("each", assignee_id="Agent:demo-adk"),
        }
    }
    added = accept({"new_tasks": [task("list"), task("each_item", directives=loop)]})
    assert [(e.source_task_id, e.target_task_id, e.kind) for e in added.edges] == [
        ("list", "each_item", "loop")
    ]
    assert assignees_of(
        PlanBlueprint.model_validate({"new_tasks": [task("each_item", directives=loop)]})
    ) == [
        "Agent:demo",
        "Agent:demo-adk",
    ]


@pytest.mark.parametrize(
    ("blueprint", "problem"),
    [
        ({}, "the blueprint is empty"),
        ({"new_tasks": [task("a"), task("a")]}, "task 'a': the task id is used twice"),
        (
            {"new_tasks": [task("a")], "new_edges": [edge("a", "zz")]},
            "edge 0 (a → zz): names unknown task 'zz'",
        ),
        (
            {"new_tasks": [task("a")], "new_edges": [edge("a", "a")]},
            "edge 0 (a → a): a task cannot depend on itself",
        ),
        (
            {
                "new_tasks": [task("a"), task("b")],
                "new_edges": [edge("a", "b", condition={"evaluator": "CEL", "expression": "output.x >"})],
            },
            "edge 0 (a → b): condition 'output.x >' does not compile",
        ),
        (
            {
                "new_tasks": [task("a"), task("b")],
                "new_edges": [edge("a", "b", data_flow={"mappings": {"x": "items[0]"}})],
            },
            "edge 0 (a → b): data_flow 'x': 'items[0]' must start with `output`",
        ),
        (
            {
                "new_tasks": [task("a"), task("b"), task("c")],
                "new_edges": [edge("a", "b"), edge("b", "c"), edge("c", "a")],
            },
            "the edges make a cycle: a → b → c → a",
        ),
        (
            {"new_tasks": [task("a", directives={"on_failure": {"type": "GOTO", "target_task_id": "nope"}})]},
            "task 'a': on_failure GOTO names unknown task 'nope'",
        ),
        (
            {"new_tasks": [task("a", directives={"on_failure": {"type": "RETRY"}})]},
            "task 'a': on_failure.type must be \"GOTO\", got 'RETRY'",
        ),
        (
            {"new_tasks": [task("a", directives={"human_interaction": {"timeout_seconds": -1}})]},
            "task 'a': human_interaction.timeout_seconds must be a positive integer, got -1",
        ),
        (
            {"new_tasks": [task("a", context_overrides={"include_task_results": ["ghost"]})]},
            "task 'a': include_task_results names unknown task 'ghost'",
        ),
        (
            {
                "new_tasks": [
                    task(
                        "l",
                        directives={
                            "loop_directive": {
                                "type": "SERIAL_ITERATION",
                                "iteration_input_key": "item",
                                "input_source_task_id": "nowhere",
                                "task_template": task("t"),
                            }
                        },
                    )
                ]
            },
            "task 'l': loop input_source_task_id names unknown task 'nowhere'",
        ),
    ],
)
def test_refusals_name_the_task_edge_or_expression(blueprint: dict[str, Any], problem: str) -> None:
    assert any(found.startswith(problem) for found in refusals(blueprint)), refusals(blueprint)


def test_a_cycle_through_a_downstream_task_is_found() -> None:
    problems = refusals(
        {
            "new_tasks": [task("a"), task("b"), task("c"), task("d")],
            "new_edges": [edge("a", "b"), edge("b", "c"), edge("c", "b"), edge("c", "d")],
        }
    )
    assert problems == ["the edges make a cycle: b → c → b (repeat work with a loop directive)"]


def test_extending_checks_against_the_graph_it_extends() -> None:
    ran = GraphTask(
        task_uuid="u-old",
        task_id="old",
        definition=PlanBlueprint.model_validate({"new_tasks": [task("old")]}).new_tasks[0],
        status=TaskStatus.COMPLETED,
        versions=[
            TaskVersion(version=1, input_data={}, assignee_id="Agent:demo", status=TaskStatus.COMPLETED)
        ],
    )
    tasks = {"u-old": ran}
    added = accept({"new_tasks": [task("next")], "new_edges": [edge("old", "next")]}, tasks)
    assert [(e.source, e.target) for e in added.edges] == [("u-old", "uuid-1")]
    problems = refusals(
        {
            "new_tasks": [task("old"), task("x")],
            "new_edges": [edge("x", "old")],
            "update_tasks": [{"task_id": "00000000-0000-0000-0000-000000000001", "new_status": "skipped"}],
        },
        tasks,
    )
    assert "task 'old': the task id is used twice" in problems
    assert "edge 0 (x → old): task 'old' has already started; it cannot wait for another" in problems
    assert "update of task 00000000-0000-0000-0000-000000000001: no such task in this graph" in problems
