"""Loop tasks: the list a loop runs over, which of its instances start or ask next, and its end.

An instance is the loop's `task_template` run with one item. A template with a
`human_interaction` gate asks before each instance (the instance waits, then is ready or, denied,
skipped). PARALLEL_ITERATION starts every instance the running-task cap allows;
SERIAL_ITERATION has one instance in flight (asking, or running) at a time. The loop completes
with its instances' outputs in order once each completed or was skipped; an instance that failed
or was cancelled ends the loop: the others are cancelled and the loop task fails.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from contracts import GraphTask, LoopDirective, TaskReason, TaskStatus, TaskVersion

    from ..state import GraphState

from ..paths import PathError
from .outcomes import Outcomes
from .progress import OPEN_TASK, Gate, Progress, Run, current, note_instance


def loop_of(task: GraphTask) -> LoopDirective | None:
    """The task's loop directive, if it is a loop."""
    return task.definition.directives.loop_directive if task.definition.directives else None


def loop_items(
    find: Callable[[str], GraphTask | None], output_of: Callable[[GraphTask], Any], task: GraphTask
) -> list[Any]:
    """The items the loop runs over (its source's whole output, or the list under
    `iteration_input_key`)."""
    loop = loop_of(task)
    assert loop is not None
    source = find(loop.input_source_task_id)
    output = output_of(source) if source is not None else None
    items = output if isinstance(output, list) else None
    if items is None and isinstance(output, dict):
        found = output.get(loop.iteration_input_key)
        items = found if isinstance(found, list) else None
    if items is None:
        raise PathError(
            f"loop over {loop.input_source_task_id!r}: its output is not a list and has no list "
            f"under {loop.iteration_input_key!r}"
        )
    return items[: loop.max_iterations] if loop.max_iterations else items


def step_instances(task: GraphTask, version: TaskVersion, room: int, progress: Progress) -> int:
    """Ask or start the loop's next instances (at most `room` starts); the runs started."""
    loop = loop_of(task)
    assert loop is not None
    serial = loop.type == "SERIAL_ITERATION"
    template = loop.task_template.directives
    gated = template is not None and template.human_interaction is not None
    started = 0
    for instance in version.instances:
        if instance.status in (TaskStatus.COMPLETED, TaskStatus.SKIPPED):
            continue
        if instance.status in (TaskStatus.RUNNING, TaskStatus.WAITING):
            if serial:
                break
            continue
        if instance.status == TaskStatus.PENDING and gated:
            note_instance(
                task,
                instance,
                TaskStatus.WAITING,
                "waiting for a person's confirmation",
                progress,
                reason_code=TaskReason.GATE_WAITING,
            )
            progress.gates.append(Gate(task.task_uuid, instance.index))
            if serial:
                break
            continue
        if started >= room:
            break
        note_instance(task, instance, TaskStatus.RUNNING, None, progress)
        progress.runs.append(Run(task.task_uuid, version.version, instance.index))
        started += 1
        if serial:
            break
    return started


def settle_loops(state: GraphState, outcomes: Outcomes, progress: Progress) -> bool:
    """End the running loops whose instances have all ended; whether any did."""
    changed = False
    for uuid in state.order:
        task = state.tasks[uuid]
        version = current(task)
        if task.status != TaskStatus.RUNNING or version is None or not version.instances:
            continue
        ended = next(
            (i for i in version.instances if i.status in (TaskStatus.FAILED, TaskStatus.CANCELLED)), None
        )
        if ended is not None:
            for instance in version.instances:
                if instance.status == TaskStatus.RUNNING and instance.workflow_id:
                    progress.cancel.append(instance.workflow_id)
                if instance.gate_interaction:
                    progress.withdraw.append(instance.gate_interaction)
                    instance.gate_interaction = None
                if instance.status in OPEN_TASK:
                    why = f"instance {ended.index} {ended.status}"
                    note_instance(task, instance, TaskStatus.CANCELLED, why, progress)
            outcomes.fail(task, f"loop instance {ended.index} {ended.status}: {ended.error}", progress)
            changed = True
        elif all(i.status in (TaskStatus.COMPLETED, TaskStatus.SKIPPED) for i in version.instances):
            outcomes.complete(task, [i.output for i in version.instances], None, progress)
            changed = True
    return changed
