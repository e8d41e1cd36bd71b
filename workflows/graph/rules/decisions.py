"""A gate's decision: the other way to READY.

A task with a `human_interaction` gate waits (settling puts it there, on every run); a loop
instance of a gated template waits too. The workflow asks a person and tells the rules which
interaction it opened (`opened`). A decision counts only for the interaction that gate still waits
for: a gate a rollback, a GOTO or an update withdrew, or one already decided, ignores it.
Confirmed, the task (or instance) is ready; denied or timed out, it is skipped, or failed when a
GOTO takes its failure up.
"""

from __future__ import annotations

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from contracts import GraphTask, LoopInstance, Principal, TaskReason, TaskStatus

    from ..state import GraphState

from .outcomes import Outcomes
from .progress import Gate, Progress, Why, current, has_goto, note, note_instance


class Decisions:
    """The gates of one graph, as the rules see them."""

    def __init__(self, state: GraphState, outcomes: Outcomes) -> None:
        self.state = state
        self.outcomes = outcomes

    def opened(self, gate: Gate, interaction_id: str) -> None:
        """The workflow asked a person for `gate`; the decision must name this interaction."""
        task = self.state.tasks[gate.task_uuid]
        if gate.instance is None:
            task.gate_interaction = interaction_id
        else:
            _instance(task, gate.instance).gate_interaction = interaction_id

    def is_open(self, gate: Gate) -> bool:
        """Whether `gate` still waits for its decision (not rolled back, cancelled or decided)."""
        task = self.state.tasks.get(gate.task_uuid)
        if task is None:
            return False
        if gate.instance is None:
            return task.status == TaskStatus.WAITING
        version = current(task)
        return (
            task.status == TaskStatus.RUNNING
            and version is not None
            and gate.instance < len(version.instances)
            and version.instances[gate.instance].status == TaskStatus.WAITING
        )

    def decide(
        self,
        gate: Gate,
        interaction_id: str,
        approved: bool,
        how: str,
        progress: Progress,
        *,
        by: str | None = None,
    ) -> bool:
        """Apply a gate's decision (`how`: who confirmed, denied or let it time out, in words; `by`:
        who, for the stream); False when the gate is no longer waiting for this interaction (rolled
        back, cancelled, decided)."""
        why: Why = {"reason_code": gate_reason(approved, by), **({"by": by} if by else {})}
        task = self.state.tasks.get(gate.task_uuid)
        if task is None or not self.is_open(gate):
            return False
        if gate.instance is not None:
            instance = _instance(task, gate.instance)
            if instance.gate_interaction != interaction_id:
                return False
            instance.gate_interaction = None
            instance.error = None if approved else f"its gate was {how}"
            status = TaskStatus.READY if approved else TaskStatus.SKIPPED
            note_instance(task, instance, status, instance.error, progress, **why)
            return True
        if task.gate_interaction != interaction_id:
            return False
        task.gate_interaction = None
        if approved:
            note(task, TaskStatus.READY, f"confirmed by {how}", progress, **why)
        elif has_goto(task):
            self.outcomes.fail(task, f"its gate was {how}", progress, **why)
        else:
            note(task, TaskStatus.SKIPPED, f"its gate was {how}", progress, **why)
        return True


def gate_reason(approved: bool, by: str | None) -> TaskReason:
    """How a gate was decided, as the stream's `TaskChanged.reason_code` says it."""
    if approved:
        return TaskReason.GATE_CONFIRMED
    return TaskReason.GATE_TIMED_OUT if by == Principal.TIMEOUT else TaskReason.GATE_DENIED


def _instance(task: GraphTask, index: int) -> LoopInstance:
    version = current(task)
    assert version is not None
    return version.instances[index]
