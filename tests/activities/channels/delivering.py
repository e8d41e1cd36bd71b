"""Running the `deliver_message` activity in tests, as a worker would."""

from __future__ import annotations

import dataclasses
import uuid

from temporalio.testing import ActivityEnvironment

from activities.channels.delivery import ChatDelivery
from contracts import Delivery, OutboundMessage
from core.settings import Settings


def environment() -> ActivityEnvironment:
    """An activity environment of its own activity id (dedupe keys are per activity)."""
    env = ActivityEnvironment()
    env.info = dataclasses.replace(env.info, activity_id=uuid.uuid4().hex)
    return env


async def deliver(
    settings: Settings, message: OutboundMessage, env: ActivityEnvironment | None = None
) -> Delivery:
    """`deliver_message(message)` in `env` (a fresh activity when None)."""
    result: Delivery = await (env or environment()).run(ChatDelivery(settings).deliver_message, message)
    return result
