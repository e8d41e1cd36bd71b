"""What supervision needs from the workflow that uses it: small protocols, no session in sight.

A session, a graph and a graph task each provide these: a way to publish chunks, a channel to
tell people (a chat, or nothing), a way to show their status in the Web UI, and the policy of who
may decide (their state model extends `state.SupervisedState`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from contracts import (
        DecisionPolicy,
        InteractionOutcome,
        InteractionRequest,
        RuleContext,
        SandboxProfile,
        StreamEvent,
    )

from ..stream.chunks import Publish


class Channel(Protocol):
    """Where the people of a chat are told about requests and decisions (may do nothing)."""

    def tell(self, event: StreamEvent, reply_to: str | None = None) -> None:
        """Tell what happened (the delivering activity words it: `core.wording`)."""
        ...

    def approval_requested(self, request: InteractionRequest) -> None:
        """Show a new request (e.g. an approval card)."""
        ...

    def decided(self, request: InteractionRequest, outcome: InteractionOutcome) -> None:
        """Show a request's decision (and, once known, the tool's result)."""
        ...

    def escalated(self, request: InteractionRequest) -> None:
        """Tell that an undecided request now also asks `escalate_to`."""
        ...


class Silent:
    """A channel that tells nobody: graphs and their task runs show requests on their streams and
    relay them to a session (`task_interactions`, `graph_progress`), not to a chat of their own."""

    def tell(self, event: StreamEvent, reply_to: str | None = None) -> None:
        """Nothing to send."""

    def approval_requested(self, request: InteractionRequest) -> None:
        """Shown on the stream."""

    def decided(self, request: InteractionRequest, outcome: InteractionOutcome) -> None:
        """Shown on the stream."""

    def escalated(self, request: InteractionRequest) -> None:
        """Shown on the stream."""


class Channels:
    """Several channels told the same things (the chat and the webhook)."""

    def __init__(self, *channels: Channel) -> None:
        """Tell each of `channels`, in order."""
        self._channels = channels

    def tell(self, event: StreamEvent, reply_to: str | None = None) -> None:
        """Tell every channel."""
        for channel in self._channels:
            channel.tell(event, reply_to)

    def approval_requested(self, request: InteractionRequest) -> None:
        """Show a new request on every channel."""
        for channel in self._channels:
            channel.approval_requested(request)

    def decided(self, request: InteractionRequest, outcome: InteractionOutcome) -> None:
        """Show a decision on every channel."""
        for channel in self._channels:
            channel.decided(request, outcome)

    def escalated(self, request: InteractionRequest) -> None:
        """Tell every channel a request escalated."""
        for channel in self._channels:
            channel.escalated(request)


@dataclass(frozen=True)
class Policy:
    """Who may decide, and how long a request waits."""

    timeout_seconds: int
    approvers: list[str] = field(default_factory=list)
    question_timeout_seconds: int | None = None
    """How long an agent's question waits (None: `timeout_seconds`)."""
    layers: tuple[dict[str, DecisionPolicy], ...] = ()
    """Decision policies by tool, most specific first (the session's, then its agent's)."""
    approve_by_requester: bool = False
    channel: str = "http"
    sandbox: SandboxProfile | None = None
    """The sandbox approved calls run in, chosen by the session or its agent (None: the tool's default)."""
    rules: RuleContext | None = None
    """The run's project, person and profile, which approval rules read (None: only global rules)."""

    def approvers_for(self, requester: str | None) -> list[str]:
        """The approvers of a request made by `requester` (empty: anyone)."""
        approvers = list(self.approvers)
        if self.approve_by_requester and requester and requester not in approvers:
            approvers.insert(0, requester)
        return approvers


@dataclass(frozen=True)
class Surface:
    """How supervision reaches the outside: the stream, the chat, the Web UI."""

    publish: Publish
    channel: Channel
    show_status: Callable[[str], None]
    """Set the status (state, search attributes, current details)."""
    refresh: Callable[[], None]
    """Redraw the Web UI's current details (pending requests)."""
