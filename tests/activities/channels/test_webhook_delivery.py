"""What a failed webhook delivery says (it ends up on the session's stream): the status and its
standard reason, never a byte the receiver wrote, whatever it answers. The `notify_webhook`
activity runs in Temporal's activity environment against a raw listener on loopback (allowed by
SYNAPSE_WEBHOOK_ALLOW)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

from activities.channels.webhook.delivery import WebhookActivities
from contracts import ErrorType, InteractionRequest, InteractionType, Notification, ToolApprovalAsk
from core.settings import Settings, WebhookSettings

from ...fakes.tcp import listening

PLANTED = "internal-7f3e9a"
"""What an internal service might say: in the answer's reason phrase, headers and body."""


def answer(status_line: str, *headers: str) -> bytes:
    head = "\r\n".join([status_line, *headers, f"content-length: {len(PLANTED)}", "connection: close"])
    return f"{head}\r\n\r\n{PLANTED}".encode()


@pytest.mark.parametrize(
    ("answered", "said", "kind", "retried"),
    [
        (answer(f"HTTP/1.1 500 {PLANTED}"), "answered 500 Internal Server Error", ErrorType.WEBHOOK_UNAVAILABLE, True),
        (answer(f"HTTP/1.1 429 {PLANTED}"), "answered 429 Too Many Requests", ErrorType.WEBHOOK_UNAVAILABLE, True),
        (answer(f"HTTP/1.1 403 {PLANTED}"), "answered 403 Forbidden", ErrorType.WEBHOOK_REJECTED, False),
        (answer(f"HTTP/1.1 599 {PLANTED}"), "answered 599 (non-standard status)", ErrorType.WEBHOOK_UNAVAILABLE, True),
        (
            answer("HTTP/1.1 302 Found", f"location: http://127.0.0.1:9/{PLANTED}"),
            "answered 302 Found: a redirect, which notifications do not follow",
            ErrorType.WEBHOOK_REJECTED,
            False,
        ),
        (f"-ERR {PLANTED}\r\n".encode(), "RemoteProtocolError: the answer is not valid HTTP", ErrorType.WEBHOOK_UNAVAILABLE, True),
    ],
)  # fmt: skip
async def test_a_failed_delivery_names_the_status_never_what_the_receiver_wrote(
    tmp_path: Path, answered: bytes, said: str, kind: ErrorType, retried: bool
) -> None:
    settings = Settings(
        data_dir=tmp_path, webhooks=WebhookSettings(secret="s3", allow="127.0.0.1"), _env_file=None
    )
    async with listening(answer=answered) as receiver:
        notification = Notification(
            notification_id="session:k/1",
            event="interaction.opened",
            session_key="k",
            workflow_id="session:k",
            at=datetime.now(UTC),
            interaction=InteractionRequest(
                interaction_id="tool_1",
                interaction_type=InteractionType.TOOL_APPROVAL,
                workflow_id="session:k",
                content={"summary": "delete rows"},
                timestamp=datetime.now(UTC),
                ask=ToolApprovalAsk(tool="sql", summary="delete rows"),
            ),
            url=f"http://127.0.0.1:{receiver.port}/hook",
        )
        with pytest.raises(ApplicationError) as failed:
            await ActivityEnvironment().run(WebhookActivities(settings).notify_webhook, notification)
    assert receiver.connections == 1, "the receiver was asked once"
    assert said in failed.value.message and PLANTED not in str(failed.value)
    assert failed.value.type == kind and failed.value.non_retryable is not retried
