"""The handlers every supervised workflow exposes, inherited rather than written again.

`SupervisionHandlers`: decisions (`decide_checked` and its signal twin `decide`, both taking a
`Decision` to `Decisions.take`) and the whole run's `pause` / `resume` / `cancel` signals (a run
that hosts the agent loop adds grants and a running tool's output: `agent.handlers`).
`ControlHandlers`: the update twins of `pause` / `resume` / `cancel`, answered with the workflow's
own view. `StreamHandlers`: the chunk stream's `watch` long-poll. A workflow class inherits them
and sets `_supervisor` (and `_chunks`) in its `@workflow.init`; the handlers only delegate, so a
session, a graph and a graph task answer the same signals and updates in the same way. Their names
are part of the workflows' public interface (clients, recorded histories): never rename one.
"""

from __future__ import annotations

from typing import Any

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from contracts import (
        Decision,
        DecisionAnswer,
        InteractionOutcome,
        SessionControl,
        WatchRequest,
        WatchResult,
    )

from ..stream.chunks import ChunkStream
from .supervisor import Supervisor


def answer_of(outcome: InteractionOutcome, decision: Decision) -> DecisionAnswer:
    """The outcome without what `decision` says already (its interaction id, principal, channel)."""
    echoed = {
        "interaction_id": decision.interaction_id,
        "decided_by": decision.principal,
        "channel": decision.channel,
    }
    data = outcome.model_dump()
    for field, value in echoed.items():
        if data[field] == value:
            data[field] = None
    return DecisionAnswer.model_validate(data)


class SupervisionHandlers:
    """`decide_checked` / `decide`, `pause`, `resume`, `cancel`."""

    _supervisor: Supervisor

    @workflow.update  # named DECIDE_CHECKED
    async def decide_checked(self, decision: Decision) -> DecisionAnswer:
        """Take a decision (`Decisions.take`); answer once the approved tool ran, the gate opened, or
        the denial is recorded (at once for a first approval of two).

        Rejected before history by the validator (`checks.check`): unknown interaction
        (`InteractionNotFound`), already decided (`InteractionAlreadyDecided`), a role below approver
        (`RoleNotAllowed`), a principal not among its approvers (`ApproverNotAllowed`), the same
        person twice (`ApproverAlreadyCounted`), what does not fit the request (`InvalidResponse`).
        """
        return answer_of(await self._supervisor.decisions.decide_checked(decision), decision)

    @decide_checked.validator
    def _validate_decide(self, decision: Decision) -> None:
        self._supervisor.decisions.check(decision)

    @workflow.signal  # named DECIDE
    def decide(self, decision: Decision) -> None:
        """Signal twin of `decide_checked`: a refused decision is audited (the API sends a refused
        update's decision here, so that every refusal is recorded whatever the door)."""
        self._supervisor.decisions.decide(decision)

    @workflow.signal
    def pause(self, control: SessionControl) -> None:
        """Start nothing new (no agent step, no tool run) until resumed."""
        self._supervisor.interventions.pause(control)

    @workflow.signal
    def resume(self, control: SessionControl) -> None:
        """Let a paused run go on."""
        self._supervisor.interventions.resume(control)

    @workflow.signal
    def cancel(self, control: SessionControl) -> None:
        """End the run: a pending approval is denied by `system:cancel`."""
        self._supervisor.interventions.cancel(control)


class ControlHandlers:
    """`pause_checked`, `resume_checked`, `cancel_checked`: refused before history when they make no
    sense (already paused, not paused, closed), answered with what `_controlled` returns.

    The answer's type is the workflow's own view (a session's `LiveSession`, a graph's
    `GraphView`): a client names it (`execute_update(..., result_type=...)`).
    """

    _supervisor: Supervisor

    def _controlled(self) -> Any:
        """After an intervention: note it, and the view to answer with."""
        raise NotImplementedError

    @workflow.update
    def pause_checked(self, control: SessionControl) -> Any:
        """Update twin of `pause`: start nothing new (a graph holds running tasks at their next safe
        point); rejected when closed or already paused."""
        self._supervisor.interventions.pause(control)
        return self._controlled()

    @pause_checked.validator
    def _validate_pause(self, control: SessionControl) -> None:
        self._supervisor.interventions.check_pause()

    @workflow.update
    def resume_checked(self, control: SessionControl) -> Any:
        """Update twin of `resume`; rejected when closed or not paused."""
        self._supervisor.interventions.resume(control)
        return self._controlled()

    @resume_checked.validator
    def _validate_resume(self, control: SessionControl) -> None:
        self._supervisor.interventions.check_resume()

    @workflow.update
    async def cancel_checked(self, control: SessionControl) -> Any:
        """Update twin of `cancel` (a graph cancels every running task); answers once the run has
        closed; rejected when it is closed already."""
        self._supervisor.interventions.cancel(control)
        await self._supervisor.interventions.cancelled()
        return self._controlled()

    @cancel_checked.validator
    def _validate_cancel(self, control: SessionControl) -> None:
        self._supervisor.interventions.check_open()


class StreamHandlers:
    """`watch`: the chunk stream's long-poll, capped."""

    _chunks: ChunkStream

    @workflow.update
    async def watch(self, request: WatchRequest) -> WatchResult:
        """Long-poll for chunks from `request.next_offset` on (see `stream.watch`).

        Returns as soon as the stream passes that offset or the run ends; idle, it adds no
        history. Rejected before history beyond `MAX_WATCHERS` in flight or on a closing run.
        """
        return await self._chunks.watch.wait(request)

    @watch.validator
    def _validate_watch(self, request: WatchRequest) -> None:
        self._chunks.watch.check(request)
