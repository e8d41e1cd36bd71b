"""What a request for a person asks, typed: approve a tool call, answer a question, or open a gate.

`InteractionRequest.ask` carries one of these (its `kind` tells which); the request's `content`
keeps the same facts in the seeds' shape for the people and clients that read it.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from .base import Contract
from .grants import GrantScope
from .sandbox import SandboxProfile


class ToolApprovalAsk(Contract):
    """May this tool call run (as proposed, edited, in which sandbox, and later calls like it)?"""

    kind: Literal["tool_approval"] = Field(default="tool_approval", description="What is asked.")
    tool: str = Field(description="The tool the agent wants to run.")
    arguments: dict[str, Any] = Field(default_factory=dict, description="Its arguments, as proposed.")
    summary: str = Field(default="", description="The call on one line.")
    grants: list[GrantScope] = Field(
        default_factory=list, description="Grants an approval may make (none: every call is asked for)."
    )
    sandboxes: list[SandboxProfile] = Field(
        default_factory=list, description="Sandboxes an approver may choose (none: its tool cannot sandbox)."
    )
    sandbox: SandboxProfile | None = Field(
        default=None,
        description="Where it runs unless the approver chooses otherwise: the floor the session, its "
        "agent and the deployment set (a wider choice needs an admin).",
    )


class QuestionAsk(Contract):
    """What is the answer (the agent's `ask_user`, or a running MCP tool's elicitation)?"""

    kind: Literal["question"] = Field(default="question", description="What is asked.")
    question: str = Field(description="The question, as the person sees it.")
    tool: str = Field(default="ask_user", description="Who asks: `ask_user`, or the MCP tool running.")


class GateAsk(Contract):
    """May this graph task (or one instance of a loop) run?"""

    kind: Literal["gate"] = Field(default="gate", description="What is asked.")
    task_id: str = Field(description="The task's blueprint id.")
    task_uuid: str = Field(description="The task's engine id.")
    instance: int | None = Field(default=None, description="The loop instance, when it is one.")
    prompt: str = Field(default="", description="What the gate asks.")


Ask = Annotated[ToolApprovalAsk | QuestionAsk | GateAsk, Field(discriminator="kind")]
"""What a request asks: one of the three, by `kind`."""
