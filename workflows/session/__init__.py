"""The session: one interactive conversation with one agent, as a workflow (`workflow`), with its
state (`state`), how it looks from outside (`view`) and its chat deliveries (`outbox`)."""

from ..stream.chunks import STREAM_TOPIC
from .workflow import SessionWorkflow

__all__ = ["STREAM_TOPIC", "SessionWorkflow"]
