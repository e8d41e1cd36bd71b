"""Settling: the one way a task becomes ready to run.

Every edge whose source has finished is resolved: taken when the source completed and its CEL
condition holds over the source's whole output, not taken when it is false or the source did not
complete; an evaluation error stays on the edge (and fails the target), never a silent false. A
paused source holds its edges until RESUME. A pending task whose edges are all resolved is then
settled: skipped (a blocking parent, or no edge taken), failed (an edge's error, its data flow),
or given its input (data flow over the inputs it has) and made ready, or, when it has a
`human_interaction` gate, made to wait for a person. A task a rollback or a GOTO summoned is not
skipped by its edges. First runs, rollbacks, GOTOs and reopened graphs all pass through here.
"""

from __future__ import annotations

from typing import Any

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from contracts import FINISHED_TASK, EdgeChanged, EdgeStatus, GraphEdge, GraphTask, TaskReason, TaskStatus

    from ..state import GraphState

from ..cel import ConditionError, Conditions
from ..paths import PathError, value_at
from .gotos import Gotos
from .outcomes import Outcomes
from .outputs import Outputs
from .progress import Gate, Progress, current, gate_of, incoming, note


class Settling:
    """Edges resolved and pending tasks settled, in one graph."""

    def __init__(
        self, state: GraphState, conditions: Conditions, outputs: Outputs, outcomes: Outcomes, gotos: Gotos
    ) -> None:
        self.state = state
        self.conditions = conditions
        self.outputs = outputs
        self.outcomes = outcomes
        self.gotos = gotos

    def resolve_edges(self, progress: Progress) -> bool:
        """Resolve every waiting edge whose source has finished; whether any was."""
        changed = False
        holds = self.state.holds
        for edge in self.state.edges:
            if edge.status != EdgeStatus.WAITING or edge.target in holds or edge.source in holds:
                continue
            source = self.state.tasks[edge.source]
            if source.status not in FINISHED_TASK or source.paused:
                continue  # a paused task's result waits for RESUME before it flows on
            if self.outputs.unread(source):
                continue  # the workflow reads its offloaded parts first
            edge.status, edge.error = self._edge_outcome(edge, source)
            changed = True
            progress.changes.append(EdgeChanged(edge=edge.edge_id, status=edge.status, error=edge.error))
        return changed

    def _edge_outcome(self, edge: GraphEdge, source: GraphTask) -> tuple[EdgeStatus, str | None]:
        if source.status != TaskStatus.COMPLETED:
            return EdgeStatus.NOT_TAKEN, None
        if edge.condition is None:
            return EdgeStatus.TAKEN, None
        version = current(source)
        facts: dict[str, Any] = {"task_id": source.task_id, "version": version.version if version else 0}
        try:
            held = self.conditions.holds(edge.condition.expression, self.outputs.of(source), facts)
        except ConditionError as err:
            return EdgeStatus.ERROR, str(err)
        return (EdgeStatus.TAKEN if held else EdgeStatus.NOT_TAKEN), None

    def settle_pending(self, progress: Progress) -> bool:
        """Settle every pending task whose edges are all resolved; whether any was."""
        changed = False
        for uuid in self.state.order:
            task = self.state.tasks[uuid]
            if task.status != TaskStatus.PENDING or uuid in self.state.holds:
                continue
            if task.goto_only and not task.summoned:
                changed = self.gotos.skip_unneeded(task, progress) or changed
                continue
            into = incoming(self.state, uuid)
            if any(edge.status == EdgeStatus.WAITING for edge in into):
                continue
            changed = True
            self._settle(task, into, progress)
        return changed

    def _settle(self, task: GraphTask, into: list[GraphEdge], progress: Progress) -> None:
        """A pending task whose edges are resolved: skipped, failed, waiting at its gate or ready."""
        taken = [edge for edge in into if edge.status == EdgeStatus.TAKEN]
        if not task.summoned:  # a rollback or a GOTO asked for this run: edges cannot skip it
            blocked = next((e for e in into if _blocks(self.state.tasks[e.source])), None)
            errors = [edge for edge in into if edge.status == EdgeStatus.ERROR]
            if blocked is not None:
                parent = self.state.tasks[blocked.source]
                note(task, TaskStatus.SKIPPED, f"parent {parent.task_id!r} {parent.status}", progress)
                return
            if errors:
                edge = errors[0]
                self.outcomes.fail(
                    task, f"edge {edge.source_task_id} → {edge.target_task_id}: {edge.error}", progress
                )
                return
            if into and not taken:
                names = ", ".join(f"{edge.source_task_id} → {edge.target_task_id}" for edge in into)
                note(task, TaskStatus.SKIPPED, f"no incoming edge was taken ({names})", progress)
                return
        try:
            task.next_input = self._input(task, taken)
        except PathError as err:
            self.outcomes.fail(task, f"data flow into {task.task_id!r}: {err}", progress)
            return
        if gate_of(task) is not None:
            note(
                task,
                TaskStatus.WAITING,
                "waiting for a person's confirmation",
                progress,
                reason_code=TaskReason.GATE_WAITING,
            )
            progress.gates.append(Gate(task.task_uuid))
        else:
            note(task, TaskStatus.READY, None, progress)

    def _input(self, task: GraphTask, taken: list[GraphEdge]) -> dict[str, Any]:
        data = dict(task.next_input if task.next_input is not None else task.definition.input_data)
        for edge in taken:
            if edge.data_flow is None:
                continue
            output = self.outputs.of(self.state.tasks[edge.source])
            for key, path in edge.data_flow.mappings.items():
                data[key] = value_at(output, path)
        return {**data, **(task.input_override or {})}


def _blocks(parent: GraphTask) -> bool:
    """A parent that failed or was cancelled, with no GOTO taking it up, blocks its children."""
    return parent.status in (TaskStatus.FAILED, TaskStatus.CANCELLED) and parent.failed_over_to is None
