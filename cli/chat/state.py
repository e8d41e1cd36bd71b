"""What one REPL knows: the session it follows, what is running and what waits for a person."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from contracts import InteractionRequest, TaskStreamChunk
from contracts.names import GRAPH_PREFIX
from core.visible import visible

GATE_REASON = re.compile(
    r"^(?:confirmed by (?P<approver>.+)|its gate was (?:denied by (?P<denier>.+)|(?P<timeout>timed out)))$"
)
"""How a graph says a task left its gate (`workflows/graph/gates.py`): the reason of the change."""


@dataclass(frozen=True)
class Settled:
    """A request that a graph task's change settled: approved or not, and by whom."""

    request: Request
    approved: bool
    by: str


@dataclass
class Request:
    """A request for a person, as a chunk or the session's state announces it."""

    interaction_id: str
    kind: str
    """`tool_approval`, `user_input` (a question) or `confirmation` (a gated graph task)."""
    workflow_id: str
    """Who asks: `session:<key>`, or a graph (`graph:<uuid>...`) the session runs."""
    content: dict[str, Any]

    @classmethod
    def of_chunk(cls, chunk: TaskStreamChunk) -> Request:
        meta = chunk.metadata
        kind = meta.get("interaction_type") or (
            "user_input" if chunk.chunk_type == "user_input_request" else "tool_approval"
        )
        content = chunk.content if isinstance(chunk.content, dict) else {"question": str(chunk.content)}
        return cls(
            str(meta["interaction_id"]), str(kind), str(meta.get("workflow_id") or chunk.workflow_id), content
        )

    @classmethod
    def of_interaction(cls, request: InteractionRequest) -> Request:
        content = request.content if isinstance(request.content, dict) else {"question": request.content}
        return cls(request.interaction_id, str(request.interaction_type), request.workflow_id, content)

    @property
    def tool(self) -> str:
        return str(self.content.get("tool_name") or "")

    @property
    def params(self) -> dict[str, Any]:
        params = self.content.get("tool_params")
        return params if isinstance(params, dict) else {}

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
        if self.kind == "user_input":
            return f"question: {self.content.get('question')}"
        if self.kind == "confirmation" and self.content.get("prompt"):
            return f"{self.content.get('summary') or 'gate'}: {self.content['prompt']}"
        summary = self.content.get("summary") or self.content.get("prompt")
        if summary:
            return str(summary)
        return f"{self.tool}: {json.dumps(self.params, ensure_ascii=False)}" if self.tool else self.kind


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

    def gate_settled(self, change: dict[str, Any]) -> Settled | None:
        """The waiting gate that a graph task's change (a progress chunk) moved past, if any.

        A session relays its graph's task changes but not the gates' decisions: a gated task that
        leaves `waiting` was decided (`confirmed by bob`, `its gate was denied by bob`), timed
        out, or was moved on otherwise (a rollback, a cancellation)."""
        if "task_uuid" not in change or change.get("status") in (None, "waiting"):
            return None
        for request in self.pending.values():
            asked = request.content
            if (
                request.kind == "confirmation"
                and asked.get("task_uuid") == change["task_uuid"]
                and asked.get("instance") == change.get("instance")
                and change.get("graph", request.workflow_id) == request.workflow_id
            ):
                said = GATE_REASON.match(str(change.get("reason") or ""))
                if said is None:
                    return Settled(request, False, f"the graph ({change['status']})")
                if said["timeout"]:
                    return Settled(request, False, "system:timeout")
                return Settled(request, said["approver"] is not None, said["approver"] or said["denier"])
        return None
