"""Resetting part of a graph so it runs again: a rollback's, or an `on_failure` GOTO's.

`reset` puts a task and everything downstream of it back to pending: their current versions are
marked superseded (kept for the record), their runs in flight are to be cancelled, their open
gates withdrawn, and the edges into them wait again. The task itself is `summoned`: its incoming
edges still resolve (it waits for an upstream that re-runs, and takes its data flow) but cannot
skip it. Nothing here starts a run: the reset tasks go through the scheduler's settling, gates
included, like any other.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from contracts import EdgeChanged, EdgeStatus, GraphTask, TaskChanged, TaskStatus

    from ..state import GraphState

from ..walk import reached
from .progress import OPEN_TASK, Progress, current, note, note_instance, runs_of


@dataclass
class Reset:
    """What a reset touched: the tasks, the runs to cancel, the gates to withdraw."""

    task_uuid: str
    affected: list[str]
    cancel: list[str] = field(default_factory=list)
    gates: list[str] = field(default_factory=list)
    changes: list[TaskChanged | EdgeChanged] = field(default_factory=list)


def downstream(state: GraphState, task_uuid: str) -> list[str]:
    """Every task downstream of `task_uuid` (by edges), in the order tasks were added."""
    found = reached(((edge.source, edge.target) for edge in state.edges), [task_uuid], with_starts=False)
    return [uuid for uuid in state.order if uuid in found]


def reset(state: GraphState, task: GraphTask, why: str, now: datetime, progress: Progress) -> Reset:
    """Put `task` and everything downstream back to pending (see the module docstring)."""
    affected = [task.task_uuid, *downstream(state, task.task_uuid)]
    done = Reset(task.task_uuid, affected)
    for uuid in affected:
        other = state.tasks[uuid]
        done.cancel += runs_of(other)
        version = current(other)
        if version is not None:
            if version.status == TaskStatus.RUNNING:
                version.status, version.finished_at, version.error = TaskStatus.CANCELLED, now, why
            for instance in version.instances:
                if instance.gate_interaction:
                    done.gates.append(instance.gate_interaction)
                    instance.gate_interaction = None
                if instance.status in OPEN_TASK:
                    note_instance(
                        other, instance, TaskStatus.CANCELLED, f"reset: {task.task_id!r} {why}", progress
                    )
            version.superseded = True
        if other.gate_interaction:
            done.gates.append(other.gate_interaction)
            other.gate_interaction = None
        other.next_input, other.input_override, other.failed_over_to = None, None, None
        other.summoned = uuid == task.task_uuid
        note(
            other,
            TaskStatus.PENDING,
            why if uuid == task.task_uuid else f"reset: {task.task_id!r} {why}",
            progress,
        )
    for edge in state.edges:
        if edge.target in affected:
            edge.status, edge.error = EdgeStatus.WAITING, None
    return done
