"""Decisions on a session's pending interactions: updates, signals and chat replies.

A mixin of `SessionWorkflow`. `respond_checked` is the validated update (rejections never reach
history); `respond` is its signal twin (rejections are audited); a chat message that arrives while
a request is pending is read as a reply (seed 001). Every decision is audited, published, and
shown on the chat's card.
"""

from __future__ import annotations

from collections.abc import Callable

from temporalio import workflow
from temporalio.exceptions import ApplicationError

with workflow.unsafe.imports_passed_through():
    from contracts import (
        InboundMessage,
        InteractionOutcome,
        InteractionRequest,
        InteractionResponse,
        SessionConfig,
        TaskChunkType,
    )

    from ..session.state import SessionState

from ..session.outbox import ChannelOutbox
from . import approvals
from .chat_reply import interpret_reply


class SessionDecisions:
    """Deciding interactions, sharing the session's state."""

    _config: SessionConfig
    _state: SessionState
    _settled: set[str]
    _requests: dict[str, InteractionRequest]
    _outbox: ChannelOutbox
    publish: Callable[..., None]
    """Publish a chunk (`SessionWorkflow.publish`)."""

    def _refresh_details(self) -> None:
        raise NotImplementedError

    def _card_decided(self, interaction_id: str, outcome: InteractionOutcome) -> None:
        request = self._requests.pop(interaction_id, None)
        if request is not None:
            self._outbox.decided(request, outcome)

    def _decide(
        self, interaction_id: str, *, approved: bool, principal: str, channel: str, comment: str | None
    ) -> InteractionOutcome:
        outcome = approvals.decide(
            self._state,
            interaction_id,
            approved=approved,
            principal=principal,
            channel=channel,
            comment=comment,
        )
        if not approved:
            self._settled.add(interaction_id)
            self._card_decided(interaction_id, outcome)
        self._state.last_activity = outcome.decided_at
        self.publish(
            TaskChunkType.PROGRESS,
            {
                "interaction_id": interaction_id,
                "approved": approved,
                "decided_by": principal,
                "channel": channel,
                "comment": comment,
            },
            metadata={"interaction_id": interaction_id},
        )
        self._refresh_details()
        return outcome

    def _decide_response(self, response: InteractionResponse) -> InteractionOutcome:
        return self._decide(
            response.interaction_id or "",
            approved=response.approved,
            principal=response.principal or approvals.ANONYMOUS,
            channel=response.channel,
            comment=response.user_message,
        )

    @workflow.update
    async def respond_checked(self, response: InteractionResponse) -> InteractionOutcome:
        """Decide an interaction and answer once the approved tool ran (or the denial is recorded).

        Rejected before history by the validator: unknown interaction (`InteractionNotFound`),
        already decided (`InteractionAlreadyDecided`), principal not allowed (`ApproverNotAllowed`).
        """
        approvals.check_response(self._state, response)  # a racing twin may have decided it
        outcome = self._decide_response(response)
        await workflow.wait_condition(
            lambda: outcome.interaction_id in self._settled or self._state.cancelled
        )
        return self._state.decided[outcome.interaction_id]

    @respond_checked.validator
    def _validate_respond(self, response: InteractionResponse) -> None:
        approvals.check_response(self._state, response)

    @workflow.signal
    def respond(self, response: InteractionResponse) -> None:
        """Signal twin of `respond_checked`: an invalid decision is audited as rejected."""
        try:
            approvals.check_response(self._state, response)
        except ApplicationError as err:
            approvals.record_rejection(self._state, response, err.message)
            return
        self._decide_response(response)

    def _reply_to_pending(self, message: InboundMessage, request: InteractionRequest) -> None:
        if not approvals.may_decide(request, message.sender_id):
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
            approvals.record_rejection(self._state, response, reason)
            self._outbox.text(reason)
            self.publish(
                TaskChunkType.ERROR, {"error": reason}, metadata={"interaction_id": request.interaction_id}
            )
            return
        reply = interpret_reply(message.content)
        comment = (
            message.content if reply != "ambiguous" else f"ambiguous reply {message.content!r} counts as deny"
        )
        self._decide(
            request.interaction_id,
            approved=reply == "approve",
            principal=message.sender_id,
            channel=message.channel,
            comment=comment,
        )
