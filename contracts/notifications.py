"""Notifications of a session's interactions, POSTed (signed) to its `notify_url`."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field

from .base import Contract
from .streaming import InteractionOutcome, InteractionRequest

NotificationEvent = Literal[
    "interaction.opened", "interaction.decided", "interaction.escalated", "interaction.timed_out"
]


class Notification(Contract):
    """One event about one interaction; the body of the webhook's POST (besides `url`)."""

    notification_id: str = Field(
        description="Unique per session (`<workflow id>/<n>`): receivers drop repeats."
    )
    event: NotificationEvent = Field(description="What happened.")
    session_key: str = Field(description="The session.")
    workflow_id: str = Field(description="Its workflow id.")
    at: datetime = Field(description="When it happened (workflow time, UTC).")
    interaction: InteractionRequest = Field(description="The interaction.")
    outcome: InteractionOutcome | None = Field(default=None, description="Its decision (decided, timed out).")
    url: str = Field(description="Where it is POSTed (not part of the body).")
    link: str | None = Field(
        default=None, description="Where a person decides it in the web console (set when it is sent)."
    )
