"""Taking decisions in: from the validated update, its signal twin, and a chat reply.

Every decision is checked (`checks`), recorded with who, where and when, audited, published and
shown on the chat's card. A first approval under the two-person rule is counted, not decided. An
approval may make a grant (`grants`) or edit the call. `respond_checked` answers once the
decision's consequence is in place: the approved tool ran (`tool_finished`), a gate opened
(`settle`), or the denial is recorded.

Determinism: state and `workflow.now()` decide everything here; no commands but the surface's.
"""

from __future__ import annotations

import json
from typing import Any

from temporalio import workflow
from temporalio.exceptions import ApplicationError

with workflow.unsafe.imports_passed_through():
    from contracts import (
        AuditKind,
        InboundMessage,
        InteractionOutcome,
        InteractionRequest,
        InteractionResponse,
        InteractionType,
        Principal,
        TaskChunkType,
        ToolResult,
    )

    from .state import SupervisedState

from . import checks, metrics, two_people
from .audit import audit
from .chat_reply import interpret_reply
from .grants import Grants
from .ports import Surface


class Decisions:
    """The decisions of one supervised run, on its state."""

    def __init__(self, state: SupervisedState, surface: Surface, grants: Grants) -> None:
        self._state = state
        self._surface = surface
        self._grants = grants
        self._settled: set[str] = set()
        self._shown: dict[str, InteractionRequest] = {r.interaction_id: r for r in state.pending}
        """Requests shown on the chat (their card shows the decision), by id."""

    def shown(self, request: InteractionRequest) -> None:
        """A request was opened and shown: its decision is shown the same way."""
        self._shown[request.interaction_id] = request

    def check(self, response: InteractionResponse) -> None:
        """Validator of `respond_checked`: unknown, already decided, or a principal not allowed."""
        checks.check_response(self._state, response)

    async def respond_checked(self, response: InteractionResponse) -> InteractionOutcome:
        """Decide, and answer once the approved tool ran (or the denial is recorded)."""
        checks.check_response(self._state, response)  # a racing twin may have decided it
        outcome = self._respond(response)
        if not outcome.complete:  # the two-person rule: counted, not decided
            return outcome
        await workflow.wait_condition(
            lambda: outcome.interaction_id in self._settled or self._state.cancelled
        )
        return self._state.decided[outcome.interaction_id]

    def respond(self, response: InteractionResponse) -> None:
        """Decide from a signal: an invalid decision is audited as rejected, not raised."""
        try:
            checks.check_response(self._state, response)
        except ApplicationError as err:
            self.reject(response, err.message)
            return
        self._respond(response)

    def reply(self, message: InboundMessage, request: InteractionRequest) -> None:
        """A chat message while `request` waits: read as its answer (confirm/cancel keywords, zh and en)."""
        if not checks.may_decide(request, message.sender_id):
            reason = (
                f"{message.sender_id} may not answer {request.interaction_id}; "
                f"allowed approvers: {', '.join(request.approvers)}"
            )
            response = InteractionResponse(
                interaction_id=request.interaction_id,
                approved=False,
                principal=message.sender_id,
                channel=message.channel,
            )
            self.reject(response, reason)
            self._refuse_reply(request, message, reason)
            return
        if request.interaction_type == InteractionType.USER_INPUT:
            self.decide(
                request.interaction_id,
                approved=True,
                principal=message.sender_id,
                channel=message.channel,
                comment=None,
                response_data={"text": message.content},
                message_id=message.message_id,
            )
            return
        reply = interpret_reply(message.content)
        if reply == "approve" and two_people.already_approved(request, message.sender_id):
            reason = (
                f"{message.sender_id} already approved {request.interaction_id}; another approver is needed"
            )
            self._refuse_reply(request, message, reason)
            return
        if reply == "approve" and two_people.needs_more(request):
            self.count(request, message.sender_id, message.channel, message_id=message.message_id)
            return
        comment = (
            message.content if reply != "ambiguous" else f"ambiguous reply {message.content!r} counts as deny"
        )
        self.decide(
            request.interaction_id,
            approved=reply == "approve",
            principal=message.sender_id,
            channel=message.channel,
            comment=comment,
            message_id=message.message_id,
        )

    def _refuse_reply(self, request: InteractionRequest, message: InboundMessage, reason: str) -> None:
        """Tell the chat and the stream why a reply did not decide `request`."""
        self._surface.channel.text(reason)
        self._surface.publish(
            TaskChunkType.ERROR,
            {"error": reason},
            metadata={"interaction_id": request.interaction_id, **replied(message), "reply_refused": True},
        )

    def count(
        self, request: InteractionRequest, principal: str, channel: str, *, message_id: str | None = None
    ) -> InteractionOutcome:
        """A first approval of a two-person request: counted, audited, shown as 1/2 everywhere; the
        (incomplete) outcome the approver is answered."""
        request.approved_by.append(principal)
        now = workflow.now()
        so_far = f"{len(request.approved_by)}/{request.approvals_required}"
        audit(
            self._state.audit,
            AuditKind.APPROVAL_COUNTED,
            principal,
            channel=channel,
            interaction_id=request.interaction_id,
            comment=f"{so_far} approvals: waiting for another approver",
            at=now,
        )
        outcome = InteractionOutcome(
            interaction_id=request.interaction_id,
            approved=True,
            decided_by=principal,
            channel=channel,
            decided_at=now,
            comment=f"{so_far} approvals: another, different approver must approve too",
            approvals=list(request.approved_by),
            complete=False,
        )
        metrics.decided(request, outcome)
        self._surface.publish(
            TaskChunkType.PROGRESS,
            {
                "interaction_id": request.interaction_id,
                "approvals": f"{len(request.approved_by)}/{request.approvals_required}",
                "approved_by": list(request.approved_by),
            },
            metadata={"interaction_id": request.interaction_id, **_message(message_id)},
        )
        self._surface.channel.decided(request.model_copy(deep=True), outcome)
        self._surface.refresh()
        return outcome

    def decide(
        self,
        interaction_id: str,
        *,
        approved: bool,
        principal: str,
        channel: str,
        comment: str | None,
        response_data: dict[str, Any] | None = None,
        message_id: str | None = None,
    ) -> InteractionOutcome:
        """Move a pending request to decided (the caller checked it): audited (a question: answered
        or declined), published and shown; a denial is settled at once. `message_id`: the chat
        message that decided it (its chunk says so: an HTTP sender waiting for its turn finds it)."""
        state = self._state
        request = checks.find_pending(state, interaction_id)
        question = request is not None and request.interaction_type == InteractionType.USER_INPUT
        state.pending[:] = [r for r in state.pending if r.interaction_id != interaction_id]
        outcome = InteractionOutcome(
            interaction_id=interaction_id,
            approved=approved,
            decided_by=principal,
            channel=channel,
            decided_at=workflow.now(),
            comment=comment,
            response_data=response_data,
        )
        state.decided[interaction_id] = outcome
        metrics.decided(request, outcome)
        yes, no = (
            (AuditKind.ANSWERED, AuditKind.DECLINED) if question else (AuditKind.APPROVED, AuditKind.DENIED)
        )
        self._audit_outcome(yes if approved else no, outcome, comment)
        if not approved:
            self._settled.add(interaction_id)
            self._card_decided(interaction_id, outcome)
        state.last_activity = outcome.decided_at
        self._surface.publish(
            TaskChunkType.PROGRESS,
            {
                "interaction_id": interaction_id,
                "approved": approved,
                "decided_by": principal,
                "channel": channel,
                "comment": comment,
                **({"response_data": response_data} if response_data else {}),
            },
            metadata={"interaction_id": interaction_id, **_message(message_id)},
        )
        self._surface.refresh()
        return outcome

    def reject(self, response: InteractionResponse, reason: str) -> None:
        """Audit a decision that was refused (signals and chats cannot answer with an error)."""
        audit(
            self._state.audit,
            AuditKind.REJECTED,
            response.principal or Principal.ANONYMOUS,
            channel=response.channel,
            interaction_id=response.interaction_id,
            comment=reason,
        )

    def settle(self, interaction_id: str) -> None:
        """The decision's consequence is in place (a gate opened): answer the waiting update."""
        self._settled.add(interaction_id)

    def tool_finished(self, interaction_id: str | None, result: ToolResult) -> None:
        """Attach an approved run's result to its decision, show it, and answer the waiting update."""
        if interaction_id is None:
            return
        outcome = self._state.decided.get(interaction_id)
        if outcome is not None:
            outcome.tool_result = result.model_dump(mode="json")
            self._card_decided(interaction_id, outcome)
        self._settled.add(interaction_id)

    def _respond(self, response: InteractionResponse) -> InteractionOutcome:
        """A checked response: counted (two-person rule) or decided, with its edit and grant."""
        request = checks.find_pending(self._state, response.interaction_id or "")
        principal = response.principal or Principal.ANONYMOUS
        if request is not None and response.approved and two_people.needs_more(request):
            return self.count(request, principal, response.channel)
        approved_by = list(request.approved_by) if request is not None else []
        outcome = self.decide(
            response.interaction_id or "",
            approved=response.approved,
            principal=principal,
            channel=response.channel,
            comment=response.user_message,
            response_data=response.response_data,
        )
        if response.approved:
            outcome.approvals = [*approved_by, principal]
        data = response.response_data or {}
        if request is not None and response.approved and "arguments" in data:
            content = request.content if isinstance(request.content, dict) else {}
            self._audit_outcome(
                AuditKind.EDITED,
                outcome,
                f"proposed {json.dumps(content.get('tool_params'), sort_keys=True, default=str)}; "
                f"runs {json.dumps(data['arguments'], sort_keys=True, default=str)}",
            )
        if request is not None and response.approved and "grant" in data:
            self._grants.record(request, outcome, str(data["grant"]))
        return outcome

    def _audit_outcome(self, kind: AuditKind, outcome: InteractionOutcome, comment: str | None) -> None:
        audit(
            self._state.audit,
            kind,
            outcome.decided_by,
            channel=outcome.channel,
            interaction_id=outcome.interaction_id,
            comment=comment,
            at=outcome.decided_at,
        )

    def _card_decided(self, interaction_id: str, outcome: InteractionOutcome) -> None:
        request = self._shown.pop(interaction_id, None)
        if request is not None:
            self._surface.channel.decided(request, outcome)


def _message(message_id: str | None) -> dict[str, str]:
    return {"message_id": message_id} if message_id else {}


def replied(message: InboundMessage) -> dict[str, str]:
    """The metadata tying a chunk to the chat message it answers."""
    return _message(message.message_id)
