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


def looped(template: dict[str, Any], **extra: Any) -> dict[str, Any]:
    """A loop task `l` over the output of task `src`, running `template` per item."""
    directives = {
        "loop_directive": {
            "type": "SERIAL_ITERATION",
            "iteration_input_key": "item",
            "input_source_task_id": "src",
            "task_template": template,
        },
        **extra.pop("directives", {}),
    }
    return task("l", directives=directives, **extra)


def overriding(config: dict[str, Any]) -> dict[str, Any]:
    """A blueprint of one task `a` whose context overrides give `config`."""
    return {"new_tasks": [task("a", context_overrides={"override_context_config": config})]}


def goto(target: Any, **failure: Any) -> dict[str, Any]:
    """A blueprint of tasks `a`, `b` where `a`'s failure continues at `target`."""
    on_failure = {"type": "GOTO", "target_task_id": target, **failure}
    return {"new_tasks": [task("a", directives={"on_failure": on_failure}), task("b")]}


def existing(task_id: str, uuid: str, status: TaskStatus = TaskStatus.PENDING) -> GraphTask:
    """A task of the graph being extended."""
    definition = PlanBlueprint.model_validate({"new_tasks": [task(task_id)]}).new_tasks[0]
    return GraphTask(task_uuid=uuid, task_id=task_id, definition=definition, status=status)


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
            "task 'a': directives.on_failure GOTO names unknown task 'nope'",
        ),
        (
            {"new_tasks": [task("a", directives={"on_failure": {"type": "RETRY"}})]},
            "task 'a': directives.on_failure.type must be \"GOTO\", got 'RETRY'",
        ),
        (
            {"new_tasks": [task("a", directives={"human_interaction": {"timeout_seconds": -1}})]},
            "task 'a': directives.human_interaction.timeout_seconds must be a whole number of seconds "
            "from 1 to 2592000 (30 days), got -1",
        ),
        (
            {"new_tasks": [task("a", context_overrides={"include_task_results": ["ghost"]})]},
            "task 'a': context_overrides.include_task_results names unknown task 'ghost'",
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
            "task 'l': directives.loop_directive.input_source_task_id names unknown task 'nowhere'",
        ),
    ],
)
def test_refusals_name_the_task_edge_or_expression(blueprint: dict[str, Any], problem: str) -> None:
    assert any(found.startswith(problem) for found in refusals(blueprint)), refusals(blueprint)


TIMEOUT = "must be a whole number of seconds from 1 to 2592000 (30 days), got"
CONTEXT = "task 'a': context_overrides.override_context_config"
TEMPLATE = "task 'l', task_template 't'"

AT_THE_DOOR = {
    # override_context_config, laid over a default AgentContextConfig
    "context: unknown field": (
        overriding({"colour": "red"}),
        f"{CONTEXT} has unknown fields ['colour'] (expected some of include_tool_list, "
        "conversation_history_config, task_list_config, artifact_config, experience_config)",
    ),
    "context: value the model rejects": (
        overriding({"include_tool_list": "maybe"}),
        f"{CONTEXT}.include_tool_list: Input should be a valid boolean",
    ),
    "context: a configuration that is not a mapping": (
        overriding({"task_list_config": ["completed"]}),
        f"{CONTEXT}.task_list_config: Input should be a valid dictionary",
    ),
    "context: unused include_metadata": (
        overriding({"include_metadata": False}),
        f"{CONTEXT}.include_metadata is not used: no agent reads it; leave it out",
    ),
    "context: status_in that would fail the run": (
        overriding({"task_list_config": {"status_in": 5}}),
        f"{CONTEXT}.task_list_config.status_in must be a list of task statuses (pending, waiting, ready, "
        "running, completed, failed, skipped, cancelled), got 5",
    ),
    "context: unknown status": (
        overriding({"task_list_config": {"status_in": ["done"]}}),
        f"{CONTEXT}.task_list_config.status_in must be a list of task statuses",
    ),
    "context: unknown field of a configuration": (
        overriding({"task_list_config": {"status": ["completed"]}}),
        f"{CONTEXT}.task_list_config has unknown fields ['status'] (expected status_in)",
    ),
    "context: artifact without its id": (
        overriding({"artifact_config": {"mode": "FULL"}}),
        f"{CONTEXT}.artifact_config.asset_id is required (an artifact id)",
    ),
    "context: artifact mode": (
        overriding({"artifact_config": {"asset_id": "art_1", "mode": "ALL"}}),
        f'{CONTEXT}.artifact_config.mode must be "FULL" or "SUMMARY", got \'ALL\'',
    ),
    "context: last_n": (
        overriding({"conversation_history_config": {"last_n": 0}}),
        f"{CONTEXT}.conversation_history_config.last_n must be a positive integer, got 0",
    ),
    "context: top_k": (
        overriding({"experience_config": {"top_k": "3"}}),
        f"{CONTEXT}.experience_config.top_k must be a positive integer, got '3'",
    ),
    "include_assets": (
        {"new_tasks": [task("a", context_overrides={"include_assets": [{"asset_id": "art_1"}]})]},
        "task 'a': context_overrides.include_assets is not supported; put an artifact in the context with "
        'context_overrides.override_context_config.artifact_config {"asset_id": "art_...", "mode": "SUMMARY"}',
    ),
    # timeouts
    "timeout zero": (
        {"new_tasks": [task("a", directives={"timeout_seconds": 0})]},
        f"task 'a': directives.timeout_seconds {TIMEOUT} 0",
    ),
    "timeout over 30 days": (
        {"new_tasks": [task("a", directives={"timeout_seconds": 2592001})]},
        f"task 'a': directives.timeout_seconds {TIMEOUT} 2592001",
    ),
    "gate timeout that is not a number": (
        {"new_tasks": [task("a", directives={"human_interaction": {"timeout_seconds": True}})]},
        f"task 'a': directives.human_interaction.timeout_seconds {TIMEOUT} True",
    ),
    "gate timeout over 30 days": (
        {"new_tasks": [task("a", directives={"human_interaction": {"timeout_seconds": 10**9}})]},
        f"task 'a': directives.human_interaction.timeout_seconds {TIMEOUT} 1000000000",
    ),
    # parent_task_id
    "parent unknown": (
        {"new_tasks": [task("a", parent_task_id="ghost")]},
        "task 'a': parent_task_id names unknown task 'ghost'",
    ),
    "parent itself": (
        {"new_tasks": [task("a", parent_task_id="a")]},
        "task 'a': parent_task_id cannot name the task itself",
    ),
    # on_failure
    "on_failure unknown field": (
        goto("b", retries=2),
        "task 'a': directives.on_failure has unknown fields ['retries'] (expected type, target_task_id, "
        "max_attempts)",
    ),
    "on_failure without a target": (
        {"new_tasks": [task("a", directives={"on_failure": {"type": "GOTO"}})]},
        "task 'a': directives.on_failure.target_task_id must name the task to continue at, got None",
    ),
    "on_failure target not text": (
        goto(7),
        "task 'a': directives.on_failure.target_task_id must name the task to continue at, got 7",
    ),
    "on_failure to itself": (goto("a"), "task 'a': directives.on_failure GOTO cannot name the task itself"),
    "max_attempts zero": (
        goto("b", max_attempts=0),
        "task 'a': directives.on_failure.max_attempts must be a whole number from 1 to 100 (how many times "
        "the GOTO is followed before the failure stands; default 3), got 0",
    ),
    "max_attempts over 100": (
        goto("b", max_attempts=101),
        "task 'a': directives.on_failure.max_attempts must be a whole number from 1 to 100",
    ),
    "max_attempts as text": (
        goto("b", max_attempts="3"),
        "task 'a': directives.on_failure.max_attempts must be a whole number from 1 to 100",
    ),
    "GOTO a loop's task_template": (
        {
            "new_tasks": [
                task("src"),
                looped(task("t")),
                task("a", directives={"on_failure": {"type": "GOTO", "target_task_id": "t"}}),
            ]
        },
        "task 'a': directives.on_failure GOTO names 't', the task_template of loop task 'l', not a task; "
        "a GOTO continues at a task",
    ),
    # a loop's task_template: checked like a task
    "template timeout negative": (
        {"new_tasks": [task("src"), looped(task("t", directives={"timeout_seconds": -5}))]},
        f"{TEMPLATE}: directives.timeout_seconds {TIMEOUT} -5",
    ),
    "template gate timeout": (
        {
            "new_tasks": [
                task("src"),
                looped(task("t", directives={"human_interaction": {"timeout_seconds": 0}})),
            ]
        },
        f"{TEMPLATE}: directives.human_interaction.timeout_seconds {TIMEOUT} 0",
    ),
    "template gate unknown field": (
        {"new_tasks": [task("src"), looped(task("t", directives={"human_interaction": {"who": ["bob"]}}))]},
        f"{TEMPLATE}: directives.human_interaction has unknown fields ['who'] (expected approvers, prompt, "
        "timeout_seconds)",
    ),
    "template gate approvers": (
        {
            "new_tasks": [
                task("src"),
                looped(task("t", directives={"human_interaction": {"approvers": "bob"}})),
            ]
        },
        f"{TEMPLATE}: directives.human_interaction.approvers must be a list of principals, got 'bob'",
    ),
    "template on_failure": (
        {
            "new_tasks": [
                task("src"),
                task("b"),
                looped(task("t", directives={"on_failure": {"type": "GOTO", "target_task_id": "b"}})),
            ]
        },
        f"{TEMPLATE}: directives.on_failure is not used in a task_template (a failed instance fails the "
        "loop task); give on_failure to task 'l'",
    ),
    "template loops again": (
        {
            "new_tasks": [
                task("src"),
                looped(task("t", directives=looped(task("u"))["directives"])),
            ]
        },
        f"{TEMPLATE}: a task_template cannot loop again",
    ),
    "template include_task_results": (
        {
            "new_tasks": [
                task("src"),
                looped(task("t", context_overrides={"include_task_results": ["ghost"]})),
            ]
        },
        f"{TEMPLATE}: context_overrides.include_task_results names unknown task 'ghost'",
    ),
    "template override_context_config": (
        {
            "new_tasks": [
                task("src"),
                looped(task("t", context_overrides={"override_context_config": {"include_tool_list": []}})),
            ]
        },
        f"{TEMPLATE}: context_overrides.override_context_config.include_tool_list: Input should be a valid "
        "boolean",
    ),
    "template include_assets": (
        {"new_tasks": [task("src"), looped(task("t", context_overrides={"include_assets": [{"a": 1}]}))]},
        f"{TEMPLATE}: context_overrides.include_assets is not supported",
    ),
    "template priority": (
        {"new_tasks": [task("src"), looped(task("t", context_overrides={"priority": "HIGHEST"}))]},
        f"{TEMPLATE}: context_overrides.priority is not used in a task_template (instances run with the "
        "loop task's priority); give priority 'HIGHEST' to task 'l'",
    ),
    "template parent": (
        {"new_tasks": [task("src"), looped(task("t", parent_task_id="ghost"))]},
        f"{TEMPLATE}: parent_task_id names unknown task 'ghost'",
    ),
    "loop timeout the template replaces": (
        {
            "new_tasks": [
                task("src"),
                looped(task("t", directives={"human_interaction": {}}), directives={"timeout_seconds": 60}),
            ]
        },
        "task 'l': directives.timeout_seconds is not used: each instance runs with the directives of "
        "task_template 't'; set timeout_seconds there",
    ),
    "loop overrides the template replaces": (
        {
            "new_tasks": [
                task("src"),
                looped(
                    task("t", context_overrides={"ad_hoc_text": "each"}),
                    context_overrides={"ad_hoc_text": "all", "include_task_results": ["src"]},
                ),
            ]
        },
        "task 'l': context_overrides ad_hoc_text, include_task_results are not used: each instance runs "
        "with the context_overrides of task_template 't'; give them there",
    ),
    # fields the engine does not use
    "workflow_id of a new graph": (
        {"workflow_id": "7f0c2a3e-0000-4000-8000-000000000000", "new_tasks": [task("a")]},
        "workflow_id 7f0c2a3e-0000-4000-8000-000000000000: a new graph's id is chosen by the server; leave "
        "workflow_id unset (to add to graph 7f0c2a3e-0000-4000-8000-000000000000, send the blueprint to it: "
        "POST /graphs/7f0c2a3e-0000-4000-8000-000000000000/blueprint)",
    ),
}


@pytest.mark.parametrize(("blueprint", "problem"), AT_THE_DOOR.values(), ids=AT_THE_DOOR.keys())
def test_what_would_fail_or_be_ignored_at_run_time_is_refused_at_the_door(
    blueprint: dict[str, Any], problem: str
) -> None:
    found = refusals(blueprint)
    assert any(p.startswith(problem) for p in found), found


def test_what_the_engine_uses_is_accepted() -> None:
    added = accept(
        {
            "new_tasks": [
                task("src", parent_task_id="l", directives={"timeout_seconds": 2592000}),
                looped(
                    task(
                        "t",
                        parent_task_id="l",
                        directives={"timeout_seconds": 1, "human_interaction": {"timeout_seconds": 2592000}},
                        context_overrides={"include_task_results": ["src"], "ad_hoc_text": "each"},
                    ),
                    context_overrides={"priority": "HIGHEST"},
                    directives={
                        "on_failure": {"type": "GOTO", "target_task_id": "handler", "max_attempts": 100}
                    },
                ),
                task(
                    "handler",
                    context_overrides={
                        "priority": "HIGHEST",
                        "include_assets": [],
                        "override_context_config": {
                            "task_id": "ignored, as at run time",
                            "include_tool_list": False,
                            "conversation_history_config": {"last_n": 5},
                            "task_list_config": {"status_in": ["COMPLETED", "failed"]},
                            "artifact_config": {"asset_id": "art_1", "mode": "FULL"},
                            "experience_config": {"query": "refunds", "top_k": 3},
                        },
                    },
                    directives={"on_failure": {"type": "GOTO", "target_task_id": "l", "max_attempts": 1}},
                ),
            ]
        }
    )
    assert [t.task_id for t in added.tasks] == ["src", "l", "handler"]


def handler(task_id: str, target: str) -> dict[str, Any]:
    """A task whose failure continues at `target`."""
    return task(task_id, directives={"on_failure": {"type": "GOTO", "target_task_id": target}})


NEVER_RUN = {
    "two handlers naming each other": (
        {"new_tasks": [task("main"), handler("h1", "h2"), handler("h2", "h1")]},
        [
            "task 'h1': directives.on_failure GOTO names task 'h2', which can never run: tasks 'h1', 'h2' "
            "run only when a failure leads there (GOTO targets that no edge leads to and that are upstream "
            "of no task whose GOTO names them), and only tasks behind them could fail; give one of them an "
            "incoming edge from a task that runs, or continue at a task that runs",
            "task 'h2': directives.on_failure GOTO names task 'h1', which can never run: tasks 'h1', 'h2' "
            "run only when a failure leads there (GOTO targets that no edge leads to and that are upstream "
            "of no task whose GOTO names them), and only tasks behind them could fail; give one of them an "
            "incoming edge from a task that runs, or continue at a task that runs",
        ],
    ),
    "a handler behind a task only a dead handler leads to": (
        {
            "new_tasks": [handler("h1", "h2"), handler("h2", "h1"), handler("after", "h3"), task("h3")],
            "new_edges": [edge("h1", "after")],
        },
        [
            "task 'h1': directives.on_failure GOTO names task 'h2', which can never run: tasks 'h1', 'h2' run",
            "task 'h2': directives.on_failure GOTO names task 'h1', which can never run: tasks 'h1', 'h2' run",
            "task 'after': directives.on_failure GOTO names task 'h3', which can never run: tasks 'h1', 'h2', "
            "'h3' run",
        ],
    ),
    "a loop source that only its loop's handler fails over to": (
        {
            "new_tasks": [
                task("src"),
                looped(task("t"), directives={"on_failure": {"type": "GOTO", "target_task_id": "h"}}),
                handler("h", "src"),
            ]
        },
        [
            "task 'l': directives.on_failure GOTO names task 'h', which can never run: tasks 'h', 'src' run",
            "task 'h': directives.on_failure GOTO names task 'src', which can never run: tasks 'h', 'src' run",
        ],
    ),
}


@pytest.mark.parametrize(("blueprint", "problems"), NEVER_RUN.values(), ids=NEVER_RUN.keys())
def test_a_goto_whose_target_can_never_run_is_refused(blueprint: dict[str, Any], problems: list[str]) -> None:
    found = refusals(blueprint)
    assert len(found) == len(problems), found
    for problem, expected in zip(found, problems, strict=True):
        assert problem.startswith(expected), (problem, expected)


RUNS = {
    "a handler of a root": {"new_tasks": [handler("main", "h1"), handler("h1", "h2"), handler("h2", "h1")]},
    "retry from fetch": {
        "new_tasks": [task("fetch"), handler("process", "fetch")],
        "new_edges": [edge("fetch", "process")],
    },
    "a handler an edge leads to": {
        "new_tasks": [task("main"), handler("h1", "h2"), handler("h2", "h1")],
        "new_edges": [edge("main", "h1")],
    },
    "a chain of handlers": {
        "new_tasks": [handler("a", "b"), handler("b", "c"), handler("c", "d"), task("d")],
    },
}


@pytest.mark.parametrize("blueprint", RUNS.values(), ids=RUNS.keys())
def test_a_goto_whose_target_a_failure_can_reach_is_accepted(blueprint: dict[str, Any]) -> None:
    assert len(accept(blueprint).tasks) == len(blueprint["new_tasks"])


def test_an_extension_is_refused_only_for_the_dead_gotos_it_adds() -> None:
    definitions = PlanBlueprint.model_validate(
        {"new_tasks": [handler("h1", "h2"), handler("h2", "h1"), task("main")]}
    ).new_tasks
    tasks = {
        f"u-{d.task_id}": GraphTask(task_uuid=f"u-{d.task_id}", task_id=d.task_id, definition=d)
        for d in definitions
    }
    added = accept({"new_tasks": [handler("next", "main")]}, tasks)
    assert [t.task_id for t in added.tasks] == ["next"], "the graph's own dead GOTOs are not the blueprint's"
    found = refusals({"new_tasks": [handler("x", "y"), handler("y", "x")]}, tasks)
    assert [p.split(":")[0] for p in found] == ["task 'x'", "task 'y'"], found
    rescue = accept({"new_tasks": [handler("rescuer", "h1")], "new_edges": [edge("main", "rescuer")]}, tasks)
    assert [t.task_id for t in rescue.tasks] == ["rescuer"]


def test_extending_refuses_a_goto_to_a_task_set_aside_and_any_workflow_id() -> None:
    skipped = "00000000-0000-0000-0000-000000000001"
    tasks = {
        skipped: existing("later", skipped),
        "u-cancelled": existing("stopped", "u-cancelled", TaskStatus.CANCELLED),
        "u-skipped": existing("passed_over", "u-skipped", TaskStatus.SKIPPED),
    }
    problems = refusals(
        {
            "workflow_id": "7f0c2a3e-0000-4000-8000-000000000000",
            "new_tasks": [
                task("a", directives={"on_failure": {"type": "GOTO", "target_task_id": "later"}}),
                task("b", directives={"on_failure": {"type": "GOTO", "target_task_id": "stopped"}}),
            ],
            "update_tasks": [{"task_id": skipped, "new_status": "SKIPPED"}],
        },
        tasks,
    )
    assert problems == [
        "workflow_id 7f0c2a3e-0000-4000-8000-000000000000: a blueprint extends the graph it is sent to; "
        "leave workflow_id unset",
        "task 'a': directives.on_failure GOTO names task 'later', which this blueprint's update_tasks sets "
        "to skipped; a failure cannot continue at a task set aside, choose another target",
        "task 'b': directives.on_failure GOTO names task 'stopped', which is cancelled; a failure cannot "
        "continue at a task set aside, choose another target",
    ]
    added = accept(
        {
            "new_tasks": [
                task("c", parent_task_id="later"),
                task("d", directives={"on_failure": {"type": "GOTO", "target_task_id": "passed_over"}}),
            ]
        },
        tasks,
    )
    assert [t.task_id for t in added.tasks] == ["c", "d"], "a skipped task stays a GOTO target"


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


def test_an_update_of_a_task_that_started_is_a_conflict_pointing_to_rollback() -> None:
    running = GraphTask(
        task_uuid="00000000-0000-0000-0000-000000000001",
        task_id="busy",
        definition=PlanBlueprint.model_validate({"new_tasks": [task("busy")]}).new_tasks[0],
        status=TaskStatus.RUNNING,
    )
    update = {"update_tasks": [{"task_id": running.task_uuid, "new_input_data": {"echo": "x"}}]}
    with pytest.raises(BlueprintRefused) as refused:
        accept(update, {running.task_uuid: running})
    assert refused.value.conflict and "roll it back with ROLLBACK_AND_MODIFY" in str(refused.value)
    rolled_back = running.model_copy(
        update={
            "status": TaskStatus.PENDING,
            "versions": [
                TaskVersion(version=1, input_data={}, assignee_id="Agent:demo", status=TaskStatus.CANCELLED)
            ],
        }
    )
    assert accept(update, {running.task_uuid: rolled_back}).updates, (
        "a rolled-back task not started yet changes"
    )
