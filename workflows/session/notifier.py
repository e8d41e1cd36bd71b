"""Telling a session's webhook (`notify_url`) about its interactions, without ever waiting for it.

Every interaction opened, decided, escalated or timed out is queued in the state
(`notifications`, carried across continue-as-new) and sent in order by one coroutine through the
`notify_webhook` activity, retried with backoff; a notification that still cannot be delivered is
shown on the stream and dropped. Sessions without a `notify_url` queue nothing and issue no commands.

Determinism: only state and activity results decide what is sent; no I/O here.
"""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy

with workflow.unsafe.imports_passed_through():
    from contracts import (
        DeliveryFailed,
        ErrorType,
        InteractionOutcome,
        InteractionRequest,
        Notification,
        NotificationEvent,
        Principal,
        SessionConfig,
        StreamEvent,
    )
    from contracts.names import NOTIFY_WEBHOOK

    from .state import SessionState

from ..stream.chunks import Publish
from .sending import send_in_order

NOTIFY_TIMEOUT = timedelta(seconds=30)
NOTIFY_RETRY = RetryPolicy(  # from 1 s, doubling: about 8 minutes of attempts
    maximum_interval=timedelta(minutes=2),
    maximum_attempts=10,
    non_retryable_error_types=[ErrorType.WEBHOOK_REJECTED, ErrorType.WEBHOOK_NOT_CONFIGURED],
)


class WebhookNotifier:
    """A `Channel` that queues notifications for the session's webhook, and sends them."""

    def __init__(self, config: SessionConfig, state: SessionState, publish: Publish, owner_id: str) -> None:
        """Bind to the session's config and state (the queue lives in the state)."""
        self._config = config
        self._state = state
        self._publish = publish
        self._owner_id = owner_id

    @property
    def enabled(self) -> bool:
        """Whether this session names a webhook."""
        return bool(self._config.notify_url)

    def _queue(
        self, event: NotificationEvent, request: InteractionRequest, outcome: InteractionOutcome | None = None
    ) -> None:
        if not self._config.notify_url:
            return
        self._state.notifications_sent += 1
        self._state.notifications.append(
            Notification(
                notification_id=f"{self._owner_id}/{self._state.notifications_sent}",
                event=event,
                session_key=self._config.session_key,
                workflow_id=self._owner_id,
                at=workflow.now(),
                interaction=request,
                outcome=outcome,
                url=self._config.notify_url,
            )
        )

    def tell(self, event: StreamEvent, reply_to: str | None = None) -> None:
        """Events are for chats (webhooks hear of interactions only)."""

    def approval_requested(self, request: InteractionRequest) -> None:
        """`interaction.opened`."""
        self._queue("interaction.opened", request)

    def decided(self, request: InteractionRequest, outcome: InteractionOutcome) -> None:
        """`interaction.decided`, or `interaction.timed_out` when nobody decided in time."""
        if not outcome.complete:
            return  # one approval of two: the request is still open
        timed_out = outcome.decided_by == Principal.TIMEOUT
        self._queue("interaction.timed_out" if timed_out else "interaction.decided", request, outcome)

    def escalated(self, request: InteractionRequest) -> None:
        """`interaction.escalated`."""
        self._queue("interaction.escalated", request)

    def pending(self) -> bool:
        """Whether notifications are still queued."""
        return bool(self._state.notifications)

    async def run(self) -> None:
        """Send queued notifications in order, forever (runs beside the session's main loop)."""
        await send_in_order(self._state.notifications, self._send, self._failed)

    async def _send(self, notification: Notification) -> None:
        await workflow.execute_activity(
            NOTIFY_WEBHOOK,
            notification,
            result_type=int,
            start_to_close_timeout=NOTIFY_TIMEOUT,
            retry_policy=NOTIFY_RETRY,
            summary=f"{notification.event} {notification.interaction.interaction_id}",
        )

    def _failed(self, notification: Notification, reason: str) -> None:
        self._publish(
            DeliveryFailed(via="webhook", what=notification.event, to=notification.url, reason=reason)
        )
