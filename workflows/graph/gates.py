"""The graph's gates: a task's (or a loop instance's) `human_interaction`, asked through the
shared supervision as a CONFIRMATION, waited for, and its decision handed to the scheduler.

Every wait is a tracked task: it ends with its decision, with its gate withdrawn (a rollback, an
update, a loop that ended), or with an unexpected error, which fails that one task with its
reason; nothing a gate does can fail the graph. After continue-as-new `rearm` waits again for
open gates, applies decisions taken meanwhile, and asks those not yet asked.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from contracts import (
        GateAsk,
        GateOpened,
        GraphTask,
        InteractionOutcome,
        InteractionRequest,
        Principal,
        TaskStatus,
    )


from ..supervision.supervisor import Supervisor
from .rules.loops import loop_of
from .rules.progress import Gate, Progress, current, gate_of
from .run import GraphRun
from .run_inputs import instance_input

Decided = Callable[[InteractionOutcome | None, Progress], None]
"""Told what a gate changed: a decision (its outcome), or a gate asked or failed (None)."""


class Gates:
    """Ask, wait for and apply the gates of one graph run."""

    def __init__(self, run: GraphRun, supervisor: Supervisor, decided: Decided) -> None:
        self._state = run.state
        self._scheduler = run.scheduler
        self._supervisor = supervisor
        self._decided = decided
        self._waiting: set[asyncio.Task[None]] = set()

    def open(self, gates: list[Gate]) -> None:
        """Ask a person for each gate (each wait is tracked)."""
        for gate in gates:
            self._track(self._ask(gate))

    def withdraw(self, interaction_ids: list[str], why: str) -> None:
        """Close gates that no longer stand (their waits end without changing their task)."""
        for interaction_id in interaction_ids:
            self._supervisor.requests.withdraw(interaction_id, Principal.ROLLBACK, why)

    def rearm(self) -> None:
        """After continue-as-new: wait again for open gates, ask those not asked yet."""
        for task in self._state.tasks.values():
            if task.status == TaskStatus.WAITING:
                self._rearm(Gate(task.task_uuid), task.gate_interaction)
            version = current(task)
            if task.status == TaskStatus.RUNNING and version is not None:
                for instance in version.instances:
                    if instance.status == TaskStatus.WAITING:
                        self._rearm(Gate(task.task_uuid, instance.index), instance.gate_interaction)

    def _rearm(self, gate: Gate, interaction_id: str | None) -> None:
        request = next((r for r in self._state.pending if r.interaction_id == interaction_id), None)
        if interaction_id is not None and (request is not None or interaction_id in self._state.decided):
            self._track(self._await(gate, interaction_id, request))
        else:
            self._track(self._ask(gate))

    def _track(self, wait: Any) -> None:
        waiter = asyncio.create_task(wait)
        self._waiting.add(waiter)
        waiter.add_done_callback(self._waiting.discard)

    async def _ask(self, gate: Gate) -> None:
        task = self._state.tasks[gate.task_uuid]
        try:
            asked, rules = _question(task, gate)
            request = self._supervisor.requests.open(
                "gate",
                asked,
                approvers=rules.get("approvers") or None,
                timeout_seconds=rules.get("timeout_seconds"),
                announce=GateOpened,
                metadata={"task_uuid": task.task_uuid, "task_id": task.task_id, "instance": gate.instance},
            )
            self._scheduler.decisions.opened(gate, request.interaction_id)
            self._decided(None, Progress())  # the graph's waiting requests changed
        except Exception as err:  # a gate that cannot be asked fails its task, never the graph
            self._failed(gate, f"its gate could not be asked: {err}")
            return
        await self._await(gate, request.interaction_id, request)

    async def _await(self, gate: Gate, interaction_id: str, request: InteractionRequest | None) -> None:
        """Wait for the decision (`request` None: it was decided already) and apply it; a decision
        that cannot be applied fails its task, never the graph."""
        try:
            await self._take_decision(gate, interaction_id, request)
        except Exception as err:
            workflow.logger.exception("the decision of gate %s was not applied", interaction_id)
            self._failed(gate, f"its gate's decision could not be applied: {err!r}")

    async def _take_decision(
        self, gate: Gate, interaction_id: str, request: InteractionRequest | None
    ) -> None:
        if request is not None:
            outcome = await self._supervisor.requests.wait_for(request)
        else:
            outcome = self._state.decided[interaction_id]
        self._supervisor.decisions.settle(interaction_id)
        how = (
            "timed out"
            if outcome.decided_by == Principal.TIMEOUT
            else f"denied by {outcome.decided_by}"
            if not outcome.approved
            else str(outcome.decided_by)
        )
        progress = Progress()
        if self._scheduler.decisions.decide(
            gate, interaction_id, outcome.approved, how, progress, by=outcome.decided_by
        ):
            self._decided(outcome, progress)

    def _failed(self, gate: Gate, reason: str) -> None:
        task = self._state.tasks[gate.task_uuid]
        progress = Progress()
        if self._scheduler.decisions.is_open(gate):
            self._scheduler.outcomes.fail(task, reason, progress)
        self._decided(None, progress)


def _question(task: GraphTask, gate: Gate) -> tuple[GateAsk, dict[str, Any]]:
    """What the gate asks a person, and its rules (approvers, timeout)."""
    if gate.instance is None:
        rules = gate_of(task) or {}
        return GateAsk(
            prompt=rules.get("prompt") or f"Run task {task.task_id!r}?",
            task_id=task.task_id,
            task_uuid=task.task_uuid,
            assignee_id=task.next_assignee_id or task.definition.assignee_id,
            input_data=task.next_input,
        ), rules
    loop = loop_of(task)
    version = current(task)
    assert loop is not None and version is not None
    template = loop.task_template
    rules = (template.directives.human_interaction if template.directives else None) or {}
    item = version.instances[gate.instance].item
    return GateAsk(
        prompt=rules.get("prompt") or f"Run task {task.task_id!r} for item {gate.instance}?",
        task_id=task.task_id,
        task_uuid=task.task_uuid,
        instance=gate.instance,
        assignee_id=version.assignee_id,
        input_data=instance_input(template, version.input_data, loop.iteration_input_key, item),
    ), rules
