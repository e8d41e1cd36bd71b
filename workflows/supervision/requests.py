"""Asking people: requests opened, waited for, escalated and withdrawn.

`open` records a pending request (audited, published, shown on the chat and in the Web UI) with
who may decide it and until when; `wait_for` waits for its decision (`decisions`), a cancel, or
its expiry, a timeout being a denial by `system:timeout`. A request nobody decided within its
escalation time also asks `escalate_to` (audited, told on the chat). `withdraw` closes one without
a person (its task was rolled back). Waiting also works after continue-as-new: the request
carries its own deadlines.

Determinism: the order of what `open` and `wait_for` do (status upserts, timers) is part of
recorded histories: a change to it is gated (`workflows/versioning`).
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any, TypedDict, Unpack

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from contracts import (
        Ask,
        AuditKind,
        GateOpened,
        InteractionOutcome,
        InteractionRequest,
        InteractionType,
        Principal,
        QuestionAsked,
        RequestEscalated,
        RequestOpened,
        SessionStatus,
        content_of,
        interaction_type_of,
    )
    from contracts.asks import summary_of

    from .state import SupervisedState

from . import metrics
from .audit import audit
from .checks import find_pending
from .decisions import Decisions
from .ports import Policy, Surface


class AskOptions(TypedDict, total=False):
    """How a request differs from the policy's defaults (`Requests.ask` / `open`)."""

    approvers: list[str] | None
    """Who may decide (a graph gate names its own); None: the policy's."""
    timeout_seconds: int | None
    """How long it waits; None: the policy's."""
    announce: type[RequestOpened] | type[QuestionAsked] | type[GateOpened]
    """The event that announces it on the stream (default `RequestOpened`)."""
    metadata: dict[str, Any] | None
    """Added to the request (e.g. the graph task a gate holds)."""
    approvals_required: int
    """2: the two-person rule (default 1)."""
    escalate_to: list[str]
    """Asked too when nobody decided after `escalate_after_seconds` (default: half the timeout)."""
    escalate_after_seconds: int | None


def escalate_at(timeout: timedelta, after_seconds: int | None) -> timedelta:
    """How long after it opens a request escalates: as configured, or half its timeout."""
    return timedelta(seconds=after_seconds) if after_seconds else timeout / 2


def waiting_status(pending: list[InteractionRequest]) -> SessionStatus:
    """What a run waiting for `pending` says: `waiting_input` when all it waits for are questions."""
    questions = all(request.interaction_type == InteractionType.USER_INPUT for request in pending)
    if pending and questions:
        return SessionStatus.WAITING_INPUT
    return SessionStatus.WAITING_APPROVAL


class Requests:
    """The requests of one supervised run, on its state."""

    def __init__(
        self,
        owner_id: str,
        state: SupervisedState,
        policy: Policy,
        surface: Surface,
        decisions: Decisions,
        *,
        prefix: str = "",
    ) -> None:
        """`prefix` starts every interaction id (graph task runs: unique within their graph)."""
        self._owner_id = owner_id
        self._state = state
        self._policy = policy
        self._surface = surface
        self._decisions = decisions
        self._prefix = prefix
        self.requester: str | None = None
        """Who asked for the work now running (their requests name them; they may approve)."""
        self.channel: str | None = None
        """Where the message that led to the work now running came from (None: the policy's channel)."""

    async def ask(self, stem: str, asked: Ask, **options: Unpack[AskOptions]) -> InteractionOutcome:
        """Ask people something (`<prefix><stem>_<n>`) and wait for a decision, a cancel, or the timeout."""
        return await self.wait_for(self.open(stem, asked, **options))

    def open(self, stem: str, asked: Ask, **options: Unpack[AskOptions]) -> InteractionRequest:
        """Open a request (audited, published, shown) without waiting; `wait_for` waits for it."""
        state = self._state
        interaction_id = f"{self._prefix}{stem}_{state.next_interaction}"
        state.next_interaction += 1
        now = workflow.now()
        timeout = timedelta(seconds=options.get("timeout_seconds") or self._policy.timeout_seconds)
        metadata = options.get("metadata") or {}
        approvers = options.get("approvers")
        escalate_to = options.get("escalate_to") or []
        request = InteractionRequest(
            interaction_id=interaction_id,
            interaction_type=interaction_type_of(asked),
            workflow_id=self._owner_id,
            content=content_of(asked),
            metadata={"channel": self.channel or self._policy.channel, **metadata},
            timestamp=now,
            approvers=approvers if approvers is not None else self._policy.approvers_for(self.requester),
            requested_by=self.requester,
            expires_at=now + timeout,
            approvals_required=options.get("approvals_required", 1),
            escalate_to=list(escalate_to),
            escalate_at=now + escalate_at(timeout, options.get("escalate_after_seconds"))
            if escalate_to
            else None,
            ask=asked,
        )
        state.pending.append(request)
        audit(
            state.audit,
            AuditKind.REQUESTED,
            request.requested_by or Principal.ANONYMOUS,
            channel=str(request.metadata.get("channel", "system")),
            interaction_id=interaction_id,
            comment=summary_of(asked),
        )
        self._decisions.shown(request)
        metrics.opened(request)
        self._surface.channel.approval_requested(request)
        self._surface.publish(options.get("announce", RequestOpened)(request=request))
        self._surface.show_status(waiting_status(state.pending))
        return request

    async def wait_for(self, request: InteractionRequest) -> InteractionOutcome:
        """Wait for an open request's decision, a cancel, or its expiry (also after continue-as-new)."""
        state = self._state
        interaction_id = request.interaction_id
        expires_at = request.expires_at or workflow.now()
        if request.escalate_at is not None and not request.escalated and request.escalate_at < expires_at:
            try:
                await workflow.wait_condition(
                    lambda: interaction_id in state.decided or state.cancelled,
                    timeout=max(request.escalate_at - workflow.now(), timedelta(0)),
                )
            except TimeoutError:
                self._escalate(interaction_id)
        timeout = expires_at - workflow.now()
        try:
            if timeout > timedelta(0):
                await workflow.wait_condition(
                    lambda: interaction_id in state.decided or state.cancelled, timeout=timeout
                )
        except TimeoutError:
            pass
        if interaction_id not in state.decided:
            principal = Principal.CANCEL if state.cancelled else Principal.TIMEOUT
            waited = expires_at - request.timestamp
            comment = state.cancel_reason if state.cancelled else f"no decision within {waited}"
            self._decisions.system(interaction_id, principal, comment, timeout=not state.cancelled)
        self._surface.show_status(SessionStatus.PAUSED if state.paused else SessionStatus.ACTIVE)
        return state.decided[interaction_id]

    def withdraw(self, interaction_id: str, principal: str, comment: str) -> None:
        """Close a pending request without a person (e.g. its task was rolled back): a denial."""
        if find_pending(self._state, interaction_id) is not None:
            self._decisions.system(interaction_id, principal, comment)

    def _escalate(self, interaction_id: str) -> None:
        """Ask `escalate_to` too (when the request names approvers at all: else anyone may already)."""
        request = find_pending(self._state, interaction_id)
        if request is None:
            return
        request.escalated = True
        if request.approvers:
            request.approvers.extend([p for p in request.escalate_to if p not in request.approvers])
        waited = (request.escalate_at or workflow.now()) - request.timestamp
        audit(
            self._state.audit,
            AuditKind.ESCALATED,
            Principal.TIMEOUT,
            interaction_id=interaction_id,
            comment=f"no decision within {waited}; now also asking {', '.join(request.escalate_to)}",
        )
        self._surface.publish(
            RequestEscalated(
                interaction_id=interaction_id, escalated_to=request.escalate_to, approvers=request.approvers
            )
        )
        self._surface.channel.escalated(request)
        self._surface.refresh()
