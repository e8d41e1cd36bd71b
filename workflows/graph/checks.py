"""What a task definition may say: the checks of one blueprint task, its directives and overrides.

`task_problems` lists every reason to refuse one task; each names the task, the field, the value
and what was expected. Refused, because it would fail or be ignored at run time:
- `parent_task_id` naming no task of the blueprint or graph, or the task itself;
- `timeout_seconds` (of the task or its `human_interaction` gate) outside 1 s to 30 days; a gate's
  unknown fields, approvers that are not a list of principals, a prompt that is not text;
- `on_failure` that is not `{"type": "GOTO", "target_task_id", "max_attempts"}`: an unknown field,
  a target that is not a task (unknown, the task itself, a loop's task_template) or is set aside
  (cancelled, or skipped/cancelled by the same blueprint's `update_tasks`), `max_attempts` outside
  1 to 100;
- `context_overrides`: `include_task_results` naming unknown tasks, `include_assets` (not
  supported), an `override_context_config` that `AgentContextConfig` rejects, its unused
  `include_metadata`, or one of its configurations with unknown fields or values of the wrong kind;
- a loop over an unknown task or its own output, with an empty `iteration_input_key` or
  `max_iterations` below 1. Its `task_template` is checked as a task and may not loop, have
  `on_failure` (a failed instance fails the loop task) or a `priority` (instances run with the
  loop task's); the loop task's `timeout_seconds` and context overrides are refused where the
  template's own replace them.
Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from pydantic import ValidationError

    from contracts import AgentContextConfig, ContextOverrides, LoopDirective, TaskDefinition, TaskStatus

MAX_TIMEOUT_SECONDS = 30 * 24 * 3600
"""Longest `timeout_seconds` of a task or a gate (30 days): longer is surely a mistake."""
MAX_GOTO_ATTEMPTS = 100
"""Most times an `on_failure` GOTO may be followed (`max_attempts`; the scheduler's default is 3)."""
GATE_FIELDS = ("approvers", "prompt", "timeout_seconds")
FAILURE_FIELDS = ("type", "target_task_id", "max_attempts")
UNUSED_CONTEXT = {"include_metadata": "no agent reads it"}
"""`AgentContextConfig` fields an override may not set, and why."""


@dataclass(frozen=True)
class Names:
    """What a task definition may refer to."""

    tasks: Collection[str]
    """Blueprint ids of the graph's tasks and of the blueprint's new ones."""
    templates: dict[str, str] = field(default_factory=dict)
    """A loop's task_template id → the loop task's id (a template is not a task)."""
    set_aside: dict[str, str] = field(default_factory=dict)
    """Task id → why a failure cannot continue there."""


class Rule(NamedTuple):
    """One field of a context configuration: what it must be."""

    expected: str
    ok: Callable[[Any], bool]
    required: bool = False


def _whole(value: Any, low: int, high: int | None = None) -> bool:
    return (
        isinstance(value, int)
        and not isinstance(value, bool)
        and value >= low
        and (high is None or value <= high)
    )


def _statuses(value: Any) -> bool:
    known = {status.value for status in TaskStatus}
    return isinstance(value, list) and all(isinstance(s, str) and s.lower() in known for s in value)


CONTEXT_RULES: dict[str, dict[str, Rule]] = {
    "conversation_history_config": {"last_n": Rule("a positive integer", lambda v: _whole(v, 1))},
    "task_list_config": {
        "status_in": Rule(f"a list of task statuses ({', '.join(s.value for s in TaskStatus)})", _statuses)
    },
    "artifact_config": {
        "asset_id": Rule("an artifact id", lambda v: isinstance(v, str) and bool(v), required=True),
        "mode": Rule('"FULL" or "SUMMARY"', lambda v: v in ("FULL", "SUMMARY")),
    },
    "experience_config": {
        "query": Rule("text", lambda v: isinstance(v, str)),
        "top_k": Rule("a positive integer", lambda v: _whole(v, 1)),
    },
}
"""The fields each configuration of `AgentContextConfig` reads (`run_inputs`, the agent loop, the
context activity); anything else would be ignored, or fail the run."""


def task_problems(definition: TaskDefinition, names: Names) -> list[str]:
    """Every reason to refuse one blueprint task (its loop's task_template included)."""
    name = f"task {definition.task_id!r}"
    problems = _definition_problems(name, definition, names)
    directives = definition.directives
    if directives is not None and directives.on_failure is not None:
        problems += _failure_problems(name, definition.task_id, directives.on_failure, names)
    if directives is not None and directives.loop_directive is not None:
        problems += _loop_problems(name, definition, directives.loop_directive, names)
    return problems


def _definition_problems(name: str, definition: TaskDefinition, names: Names) -> list[str]:
    """What a task and a loop's task_template share: parent, context overrides, timeout, gate."""
    problems: list[str] = []
    parent = definition.parent_task_id
    if parent is not None and parent == definition.task_id:
        problems.append(f"{name}: parent_task_id cannot name the task itself")
    elif parent is not None and parent not in names.tasks:
        problems.append(f"{name}: parent_task_id names unknown task {parent!r}")
    if definition.context_overrides is not None:
        problems += _override_problems(name, definition.context_overrides, names)
    directives = definition.directives
    if directives is not None:
        problems += _timeout_problems(name, "directives.timeout_seconds", directives.timeout_seconds)
        if directives.human_interaction is not None:
            problems += _gate_problems(name, directives.human_interaction)
    return problems


def _timeout_problems(name: str, where: str, seconds: Any) -> list[str]:
    if seconds is None or _whole(seconds, 1, MAX_TIMEOUT_SECONDS):
        return []
    return [
        f"{name}: {where} must be a whole number of seconds from 1 to {MAX_TIMEOUT_SECONDS} (30 days), "
        f"got {seconds!r}"
    ]


def _gate_problems(name: str, gate: dict[str, Any]) -> list[str]:
    where = "directives.human_interaction"
    problems: list[str] = []
    approvers = gate.get("approvers", [])
    if not isinstance(approvers, list) or not all(isinstance(a, str) for a in approvers):
        problems.append(f"{name}: {where}.approvers must be a list of principals, got {approvers!r}")
    problems += _timeout_problems(name, f"{where}.timeout_seconds", gate.get("timeout_seconds"))
    prompt = gate.get("prompt")
    if prompt is not None and not isinstance(prompt, str):
        problems.append(f"{name}: {where}.prompt must be text, got {prompt!r}")
    unknown = sorted(set(gate) - set(GATE_FIELDS))
    if unknown:
        problems.append(f"{name}: {where} has unknown fields {unknown} (expected {', '.join(GATE_FIELDS)})")
    return problems


def _failure_problems(name: str, task_id: str, failure: dict[str, Any], names: Names) -> list[str]:
    where = "directives.on_failure"
    problems: list[str] = []
    unknown = sorted(set(failure) - set(FAILURE_FIELDS))
    if unknown:
        problems.append(
            f"{name}: {where} has unknown fields {unknown} (expected {', '.join(FAILURE_FIELDS)})"
        )
    if failure.get("type") != "GOTO":
        problems.append(f'{name}: {where}.type must be "GOTO", got {failure.get("type")!r}')
    target = failure.get("target_task_id")
    if not isinstance(target, str) or not target:
        problems.append(f"{name}: {where}.target_task_id must name the task to continue at, got {target!r}")
    elif target == task_id:
        problems.append(f"{name}: {where} GOTO cannot name the task itself")
    elif target in names.set_aside:
        problems.append(
            f"{name}: {where} GOTO names task {target!r}, {names.set_aside[target]}; "
            "a failure cannot continue at a task set aside, choose another target"
        )
    elif target not in names.tasks and target in names.templates:
        problems.append(
            f"{name}: {where} GOTO names {target!r}, the task_template of loop task "
            f"{names.templates[target]!r}, not a task; a GOTO continues at a task"
        )
    elif target not in names.tasks:
        problems.append(f"{name}: {where} GOTO names unknown task {target!r}")
    attempts = failure.get("max_attempts")
    if "max_attempts" in failure and not _whole(attempts, 1, MAX_GOTO_ATTEMPTS):
        problems.append(
            f"{name}: {where}.max_attempts must be a whole number from 1 to {MAX_GOTO_ATTEMPTS} (how many "
            f"times the GOTO is followed before the failure stands; default 3), got {attempts!r}"
        )
    return problems


def _override_problems(name: str, overrides: ContextOverrides, names: Names) -> list[str]:
    where = "context_overrides"
    problems = [
        f"{name}: {where}.include_task_results names unknown task {other!r}"
        for other in overrides.include_task_results or []
        if other not in names.tasks
    ]
    if overrides.include_assets:
        problems.append(
            f"{name}: {where}.include_assets is not supported; put an artifact in the context with "
            f'{where}.override_context_config.artifact_config {{"asset_id": "art_...", "mode": "SUMMARY"}}'
        )
    if overrides.override_context_config is not None:
        problems += _context_problems(
            f"{name}: {where}.override_context_config", overrides.override_context_config
        )
    return problems


def _context_problems(where: str, config: dict[str, Any]) -> list[str]:
    """`config` laid over a default `AgentContextConfig` (as `runs.with_overrides` lays it over the
    agent's, `task_id` dropped): unknown and unused fields, and values the model rejects."""
    fields = AgentContextConfig.model_fields
    given = {key: value for key, value in config.items() if key != "task_id"}
    used = [key for key in fields if key not in UNUSED_CONTEXT]
    problems: list[str] = []
    unknown = sorted(set(given) - set(fields))
    if unknown:
        problems.append(f"{where} has unknown fields {unknown} (expected some of {', '.join(used)})")
    problems += [
        f"{where}.{key} is not used: {why}; leave it out"
        for key, why in UNUSED_CONTEXT.items()
        if key in given
    ]
    try:
        AgentContextConfig.model_validate({key: value for key, value in given.items() if key in fields})
    except ValidationError as err:
        for error in err.errors():
            path = ".".join(str(step) for step in error["loc"])
            problems.append(f"{where}.{path}: {error['msg']}, got {error['input']!r}")
        return problems
    for key, rules in CONTEXT_RULES.items():
        section = given.get(key)
        if section is not None:
            problems += _section_problems(f"{where}.{key}", section, rules)
    return problems


def _section_problems(where: str, section: dict[str, Any], rules: dict[str, Rule]) -> list[str]:
    problems: list[str] = []
    unknown = sorted(set(section) - set(rules))
    if unknown:
        problems.append(f"{where} has unknown fields {unknown} (expected {', '.join(rules)})")
    for key, rule in rules.items():
        if key in section and not rule.ok(section[key]):
            problems.append(f"{where}.{key} must be {rule.expected}, got {section[key]!r}")
        elif key not in section and rule.required:
            problems.append(f"{where}.{key} is required ({rule.expected})")
    return problems


def _loop_problems(name: str, definition: TaskDefinition, loop: LoopDirective, names: Names) -> list[str]:
    where = "directives.loop_directive"
    problems: list[str] = []
    if loop.input_source_task_id == definition.task_id:
        problems.append(f"{name}: a loop cannot iterate over its own output")
    elif loop.input_source_task_id not in names.tasks:
        problems.append(
            f"{name}: {where}.input_source_task_id names unknown task {loop.input_source_task_id!r}"
        )
    if not loop.iteration_input_key:
        problems.append(f"{name}: {where}.iteration_input_key is empty")
    if loop.max_iterations is not None and loop.max_iterations <= 0:
        problems.append(f"{name}: {where}.max_iterations must be positive, got {loop.max_iterations}")
    template = loop.task_template
    inside = f"{name}, task_template {template.task_id!r}"
    problems += _definition_problems(inside, template, names)
    own = template.directives
    if own is not None and own.loop_directive is not None:
        problems.append(f"{inside}: a task_template cannot loop again")
    if own is not None and own.on_failure is not None:
        problems.append(
            f"{inside}: directives.on_failure is not used in a task_template (a failed instance fails "
            f"the loop task); give on_failure to task {definition.task_id!r}"
        )
    if template.context_overrides is not None and template.context_overrides.priority != "NORMAL":
        problems.append(
            f"{inside}: context_overrides.priority is not used in a task_template (instances run with "
            f"the loop task's priority); give priority {template.context_overrides.priority!r} to task "
            f"{definition.task_id!r}"
        )
    return problems + _replaced_problems(name, definition, template)


def _replaced_problems(name: str, definition: TaskDefinition, template: TaskDefinition) -> list[str]:
    """A loop task's timeout and context overrides that its template's own replace (each instance
    runs with the template's directives and overrides when it has them, the loop task's otherwise)."""
    problems: list[str] = []
    directives = definition.directives
    if directives is not None and directives.timeout_seconds is not None and template.directives is not None:
        problems.append(
            f"{name}: directives.timeout_seconds is not used: each instance runs with the directives of "
            f"task_template {template.task_id!r}; set timeout_seconds there"
        )
    overrides = definition.context_overrides
    if overrides is not None and template.context_overrides is not None:
        replaced = [
            key
            for key in ("ad_hoc_text", "include_task_results", "override_context_config")
            if getattr(overrides, key) is not None
        ]
        if replaced:
            verb = "is" if len(replaced) == 1 else "are"
            problems.append(
                f"{name}: context_overrides {', '.join(replaced)} {verb} not used: each instance runs with "
                f"the context_overrides of task_template {template.task_id!r}; give them there"
            )
    return problems
