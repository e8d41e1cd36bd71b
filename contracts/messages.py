"""Conversation messages: what people send in and what the agent sees."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import Field

from .access import Role
from .base import CompactContract, Contract
from .principals import PersonId


class UniversalMessage(Contract):
    """One message of a conversation, in a framework-neutral shape."""

    role: Literal["system", "user", "assistant", "tool"] = Field(description="Who speaks.")
    content: Any = Field(default=None, description="Text, or a JSON value for tool results.")
    name: str | None = Field(default=None, description="Sender principal (user) or tool name (tool).")
    tool_call_id: str | None = Field(
        default=None, description="The interaction/tool call this tool message answers."
    )
    timestamp: datetime | None = Field(default=None, description="When it was said (UTC).")
    metadata: dict[str, Any] = Field(default_factory=dict, description="Channel extras.")


class ChannelRef(Contract):
    """Where a chat message came from and what an answer replies to, in any chat channel's terms."""

    channel: str = Field(description="The chat channel: lark, dingtalk, ...")
    chat_id: str = Field(description="The channel's conversation the message was said in.")
    reply_to: str | None = Field(
        default=None,
        description="The channel's id of the message an answer replies to (threads it); None: sent plainly.",
    )


class InboundMessage(CompactContract):
    """A message from a person, on any channel, for one session."""

    channel: str = Field(default="http", description="Where it came from: http, ag-ui, lark, cli, ...")
    sender_id: PersonId = Field(default="anonymous", description="Principal who sent it.")
    chat_id: str = Field(default="", description="Channel conversation it belongs to.")
    content: str = Field(min_length=1, description="The text.")
    message_id: str | None = Field(default=None, description="Channel message id; a repeated id is ignored.")
    role: Role | None = Field(
        default=None,
        description="The sender's role: an API key's (the API sets it), or a chat user's by the channel's "
        "approver settings. A reply decides a pending request only from an approver or higher.",
    )
    metadata: dict[str, Any] = Field(default_factory=dict, description="Channel extras.")
    origin: ChannelRef | None = Field(
        default=None, description="The chat it came from (chat channels); None for HTTP and the CLI."
    )
    may_reply: bool = Field(
        default=True,
        description="Whether it may be read as the reply to a request that waits (a chat's text). False: "
        "it is only ever the agent's next message, queued until the turn that waits is over (AG-UI, "
        "whose decisions come as a run's `resume`).",
    )
