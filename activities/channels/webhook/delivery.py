"""`notify_webhook`: POST one `Notification` to a session's `notify_url`, signed.

The body is the notification as JSON (without `url`), its `link` the console's page of the
request (SYNAPSE_CONSOLE_URL). Headers: `X-Synapse-Event`,
`X-Synapse-Notification-Id`, `X-Synapse-Timestamp` (Unix seconds) and `X-Synapse-Signature:
sha256=<hex>`, the HMAC-SHA256 with SYNAPSE_WEBHOOK_SECRET of `<timestamp>.<body>`; a receiver
recomputes it and rejects old timestamps (see `signature`). A 2xx answer delivers it; 408, 429,
5xx, a timeout or no connection raise a retryable error (the workflow retries with backoff);
any other 4xx, and a 3xx (redirects are not followed), is `WebhookRejected` (not retried). The
workflow never waits for this.

The URL is a caller's, so the POST goes through `core.outbound`: only to public addresses, or to
what SYNAPSE_WEBHOOK_ALLOW names, checked after resolution and connected to as checked; anything
else is `WebhookRefused` (not retried). An error names the status and its standard reason, never
the receiver's body: it is shown on the session's stream, and an internal service's answer is
not for the caller to read.
"""

from __future__ import annotations

import hashlib
import hmac
import time
from collections.abc import Callable
from http import HTTPStatus
from typing import Any

import httpx
from temporalio import activity
from temporalio.exceptions import ApplicationError

from contracts import ErrorType, Notification
from contracts.names import NOTIFY_WEBHOOK
from core.outbound import OutboundRefused, guarded_client
from core.settings import Settings
from core.tls import tls_context

RETRYABLE_STATUSES = frozenset({408, 429})


def signature(secret: str, timestamp: str, body: bytes) -> str:
    """`sha256=<hex>`: HMAC-SHA256 of `<timestamp>.<body>` with `secret`."""
    digest = hmac.new(secret.encode(), timestamp.encode() + b"." + body, hashlib.sha256).hexdigest()
    return f"sha256={digest}"


class WebhookActivities:
    """The `notify_webhook` activity."""

    def __init__(self, settings: Settings) -> None:
        """Sign with `settings.webhooks.secret`; each POST may take `timeout_seconds`; link to the
        console at `settings.console_url`."""
        self._settings = settings.webhooks
        self._links = settings

    def activities(self) -> list[Callable[..., Any]]:
        """The bound activity methods, for `Worker(activities=...)`."""
        return [self.notify_webhook]

    @activity.defn(name=NOTIFY_WEBHOOK)
    async def notify_webhook(self, notification: Notification) -> int:
        """POST the notification; the receiver's HTTP status.

        Raises:
            ApplicationError: `WebhookNotConfigured`, `WebhookRefused` or `WebhookRejected` (not
                retried), `WebhookUnavailable` (retried).
        """
        secret = self._settings.secret
        if not secret:
            raise ApplicationError(
                "SYNAPSE_WEBHOOK_SECRET is not set on this worker: notifications cannot be signed",
                type=ErrorType.WEBHOOK_NOT_CONFIGURED,
                non_retryable=True,
            )
        link = self._links.console_link(notification.workflow_id, notification.interaction.interaction_id)
        body = notification.model_copy(update={"link": link}).model_dump_json(exclude={"url"}).encode()
        timestamp = str(int(time.time()))
        headers = {
            "content-type": "application/json",
            "x-synapse-event": notification.event,
            "x-synapse-notification-id": notification.notification_id,
            "x-synapse-timestamp": timestamp,
            "x-synapse-signature": signature(secret, timestamp, body),
        }
        try:
            async with guarded_client(
                self._settings.policy, timeout=self._settings.timeout_seconds, verify=tls_context()
            ) as http:
                # The status is all that counts: the receiver's body is never read.
                async with http.stream("POST", notification.url, content=body, headers=headers) as response:
                    status = response.status_code
        except (OutboundRefused, httpx.InvalidURL) as err:
            raise ApplicationError(
                f"webhook {notification.url} refused: {err}",
                type=ErrorType.WEBHOOK_REFUSED,
                non_retryable=True,
            ) from None
        except httpx.HTTPError as err:
            raise ApplicationError(
                f"webhook {notification.url} unreachable: {_failure(err)}",
                type=ErrorType.WEBHOOK_UNAVAILABLE,
            ) from None
        if status < 300:
            return status
        detail = f"webhook {notification.url} answered {status} {_reason(status)}"
        if status < 400:
            detail += ": a redirect, which notifications do not follow"
        elif status >= 500 or status in RETRYABLE_STATUSES:
            raise ApplicationError(detail, type=ErrorType.WEBHOOK_UNAVAILABLE)
        raise ApplicationError(detail, type=ErrorType.WEBHOOK_REJECTED, non_retryable=True)


def _reason(status: int) -> str:
    """The standard reason of `status` (never the receiver's own phrase or body)."""
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "(non-standard status)"


def _failure(err: httpx.HTTPError) -> str:
    """What went wrong sending, in words of this side: an answer that is not HTTP is named so, never
    quoted (the parser's message quotes the receiver's first line)."""
    if isinstance(err, httpx.ProtocolError):
        return f"{type(err).__name__}: the answer is not valid HTTP"
    return f"{type(err).__name__}: {err}"
