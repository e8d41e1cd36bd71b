"""What one REPL knows: the session it follows, what is running and what waits for a person."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from contracts import (
    Ask,
    GateAsk,
    InteractionRequest,
    Principal,
    QuestionAsk,
    TaskChanged,
    TaskReason,
    ToolApprovalAsk,
)
from contracts.asks import summary_of
from contracts.names import GRAPH_PREFIX
from contracts.streaming import interaction_type_of
from core.visible import visible

DECIDED_GATE = {
    TaskReason.GATE_CONFIRMED: True,
    TaskReason.GATE_DENIED: False,
    TaskReason.GATE_TIMED_OUT: False,
}
"""How a graph task's change says its gate was decided: approved or not."""


@dataclass(frozen=True)
class Settled:
    """A request that a graph task's change settled: approved or not, and by whom."""

    request: Request
    approved: bool
    by: str


@dataclass
class Request:
    """A request for a person, as the stream (`RequestOpened`, `QuestionAsked`) or the session's state
    announces it."""

    interaction_id: str
    workflow_id: str
    """Who asks: `session:<key>`, or a graph (`graph:<uuid>...`) the session runs."""
    ask: Ask
    """What it asks, typed."""

    @classmethod
    def of_interaction(cls, request: InteractionRequest) -> Request:
        return cls(request.interaction_id, request.workflow_id, request.ask)

    @property
    def kind(self) -> str:
        """`tool_approval`, `user_input` (a question) or `confirmation` (a gated graph task)."""
        return str(interaction_type_of(self.ask))

    @property
    def tool(self) -> str:
        return self.ask.tool if isinstance(self.ask, ToolApprovalAsk | QuestionAsk) else ""

    @property
    def params(self) -> dict[str, Any]:
        return self.ask.arguments if isinstance(self.ask, ToolApprovalAsk) else {}

    @property
    def question(self) -> str:
        """What a question asks."""
        return self.ask.question if isinstance(self.ask, QuestionAsk) else ""

    @property
    def gate(self) -> tuple[str, int | None, str]:
        """A gate's task (blueprint id), loop instance and prompt."""
        ask = self.ask
        return (ask.task_id, ask.instance, ask.prompt) if isinstance(ask, GateAsk) else ("", None, "")

    @property
    def grants(self) -> list[str]:
        """The grant scopes an approval may make (`session`, `session_prefix`)."""
        return [str(scope) for scope in self.ask.grants] if isinstance(self.ask, ToolApprovalAsk) else []

    def holds(self, change: TaskChanged) -> bool:
        """Whether this is the gate of the task (or loop instance) a graph's change is about."""
        if not isinstance(self.ask, GateAsk) or (change.graph or self.workflow_id) != self.workflow_id:
            return False
        return (self.ask.task_uuid, self.ask.instance) == (change.task_uuid, change.instance)

    @property
    def graph_id(self) -> str | None:
        """The graph that asks (its decisions go to `/graphs/{id}/interactions`), or None."""
        if not self.workflow_id.startswith(GRAPH_PREFIX):
            return None
        return self.workflow_id.split(":")[1]

    def line(self) -> str:
        """The request on one line, non-printing characters escaped (`core.visible`)."""
        return visible(self._line())

    def _line(self) -> str:
        ask = self.ask
        if isinstance(ask, QuestionAsk):
            return f"question: {ask.question}"
        if isinstance(ask, GateAsk):
            return f"{summary_of(ask)}: {ask.prompt}" if ask.prompt else summary_of(ask)
        return ask.summary or f"{ask.tool}: {json.dumps(ask.arguments, ensure_ascii=False)}"


@dataclass
class ChatState:
    """The REPL's view of its session (changed by the event follower and by commands)."""

    key: str
    agent: str
    profile: str
    project: str
    principal: str
    started: bool = False
    """The session exists (a new one is created with the first message)."""
    connection: str = "idle"
    pending: dict[str, Request] = field(default_factory=dict)
    turn: bool = False
    """A turn is running (Ctrl-C offers to cancel it)."""
    activity: str | None = None
    """What the agent does now, for the footer's spinner (None: nothing)."""
    shell_mode: bool = False
    last_graph: str | None = None

    def switch(self, key: str, agent: str | None = None, profile: str | None = None) -> None:
        """Follow another session from now on (what was known of this one is dropped)."""
        self.key, self.started, self.turn, self.activity = key, True, False, None
        self.agent = agent or self.agent
        self.profile = profile or self.profile
        self.pending.clear()

    def gate_settled(self, change: TaskChanged) -> Settled | None:
        """The waiting gate that a graph task's change moved past, if any.

        A gated task that leaves `waiting` was decided (the change's `reason_code` and `by` say how
        and by whom), timed out, or was moved on otherwise (a rollback, a cancellation)."""
        if change.status == "waiting":
            return None
        request = next((r for r in self.pending.values() if r.holds(change)), None)
        if request is None:
            return None
        approved = DECIDED_GATE.get(change.reason_code) if change.reason_code else None
        if approved is None:
            return Settled(request, False, f"the graph ({change.status})")
        if change.reason_code == TaskReason.GATE_TIMED_OUT:
            return Settled(request, False, change.by or Principal.TIMEOUT)
        return Settled(request, approved, change.by or "someone")
