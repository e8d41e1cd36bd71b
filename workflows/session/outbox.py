"""Delivering a session's answers and approval cards to its chat channel (Lark/Feishu, DingTalk).

The session queues deliveries in its state (`outbox`), so they survive continue-as-new and
crashes; one workflow coroutine sends them in order through the `deliver_message` activity.
An approval card's id (Lark `message_id`, DingTalk `outTrackId`) is kept so its decision can
update the same card. Sessions of other channels (HTTP) never queue anything, so this issues
no commands for them.

Determinism: only state and activity results decide what is sent. A failed delivery is shown in
the session's stream and skipped; it never fails the session.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from temporalio import workflow
from temporalio.common import RetryPolicy

from ..stream.chunks import Publish
from ..supervision.decisions import taken
from .sending import send_in_order

with workflow.unsafe.imports_passed_through():
    from contracts import (
        CHAT_CHANNELS,
        DELIVERY_REFUSALS,
        Delivery,
        DeliveryFailed,
        InteractionOutcome,
        InteractionRequest,
        InteractionType,
        OutboundMessage,
        Principal,
        QuestionAsked,
        RequestEscalated,
        SessionConfig,
        StreamEvent,
    )
    from contracts.names import DELIVER_MESSAGE

    from .state import SessionState

DELIVERY_TIMEOUT = timedelta(seconds=30)
"""One Open API call (a long text is a few): seconds at most."""
DELIVERY_RETRY = RetryPolicy(  # from 1 s, doubling
    maximum_interval=timedelta(seconds=30),
    maximum_attempts=8,
    non_retryable_error_types=list(DELIVERY_REFUSALS),
)


class ChannelOutbox:
    """Queues and sends a session's chat deliveries; does nothing for non-chat sessions."""

    def __init__(self, config: SessionConfig, state: SessionState, publish: Publish) -> None:
        """Bind to the session's config and state (the queue lives in the state)."""
        self._config = config
        self._state = state
        self._publish = publish

    @property
    def enabled(self) -> bool:
        """Whether this session has a chat to deliver to."""
        return self._config.channel in CHAT_CHANNELS and bool(self._config.chat_id)

    def _queue(self, kind: str, **fields: Any) -> None:
        if self.enabled:
            chat_id = self._config.chat_id or ""
            self._state.outbox.append(
                OutboundMessage(
                    channel=self._config.channel,
                    chat_id=chat_id,
                    kind=kind,
                    session_key=self._config.session_key,
                    **fields,
                )
            )

    def tell(
        self, event: StreamEvent, reply_to: str | None = None, request: InteractionRequest | None = None
    ) -> None:
        """Tell the chat what happened (an answer, an error, a notice); the `deliver_message` activity
        words it (`core.wording.chat_text`, about `request` when it concerns one)."""
        self._queue("event", event=event, reply_to=reply_to, interaction=request)

    def approval_requested(self, request: InteractionRequest) -> None:
        """Send the interactive approval card; a question goes as text, answered by the next reply."""
        if request.interaction_type == InteractionType.USER_INPUT:
            self.tell(QuestionAsked(request=request))
            return
        self._queue("approval_card", interaction=request)

    def decided(self, request: InteractionRequest, outcome: InteractionOutcome) -> None:
        """Update the card with the decision; tell the chat when nobody decided in time."""
        question = request.interaction_type == InteractionType.USER_INPUT
        if not question:
            self._queue("card_update", interaction=request, outcome=outcome)
        if outcome.decided_by == Principal.TIMEOUT:
            self.tell(taken(outcome), request=request)

    def escalated(self, request: InteractionRequest) -> None:
        """Remind the chat, mentioning `escalate_to` (they are notified), and show on the card who may
        decide now."""
        self._queue(
            "event",
            event=RequestEscalated(
                interaction_id=request.interaction_id,
                escalated_to=request.escalate_to,
                approvers=request.approvers,
            ),
            mentions=list(request.escalate_to),
        )
        if request.interaction_type != InteractionType.USER_INPUT:
            self._queue("card_update", interaction=request.model_copy(deep=True))

    def pending(self) -> bool:
        """Whether deliveries are still queued."""
        return bool(self._state.outbox)

    async def run(self) -> None:
        """Send queued deliveries in order, forever (runs beside the session's main loop)."""
        await send_in_order(self._state.outbox, self._send, self._failed)

    async def _send(self, message: OutboundMessage) -> None:
        state = self._state
        interaction_id = message.interaction.interaction_id if message.interaction else None
        if message.kind == "card_update" and interaction_id:
            message = message.model_copy(update={"card_message_id": state.cards.get(interaction_id)})
        delivery = await workflow.execute_activity(
            DELIVER_MESSAGE,
            message,
            result_type=Delivery,
            start_to_close_timeout=DELIVERY_TIMEOUT,
            retry_policy=DELIVERY_RETRY,
            summary=f"{message.channel} {message.kind} to {message.chat_id}",
        )
        if message.kind == "approval_card" and interaction_id and delivery.message_id:
            state.cards[interaction_id] = delivery.message_id

    def _failed(self, message: OutboundMessage, reason: str) -> None:
        self._publish(DeliveryFailed(via="chat", what=message.kind, to=message.channel, reason=reason))
