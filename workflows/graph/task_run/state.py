"""The one state model of a graph task's run (a run never continues-as-new: it is one agent turn)."""

from __future__ import annotations

from pydantic import ConfigDict, Field

from contracts import UniversalMessage

from ...agent.state import AgentRunState


class TaskRunState(AgentRunState):
    """Everything one task run knows (a run never continues-as-new: it is one agent turn)."""

    model_config = ConfigDict(extra="forbid")

    messages: list[UniversalMessage] = Field(default_factory=list)
