"""What a request for a person asks, typed: approve a tool call, answer a question, or open a gate.

`InteractionRequest.ask` carries one of these (its `kind` tells which), and everything that shows
or checks a request reads it. The request's `content` is the same facts in the seeds' shape
(`content_of`), kept for clients written against the seeds.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from .base import Contract
from .grants import GrantScope
from .rules import RuleVerdict
from .sandbox import SandboxProfile
from .tools import CallContext


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
    description: str = Field(default="", description="What the tool does.")
    reason: str = Field(default="", description="Why the call needs a person's approval.")
    head: str | None = Field(
        default=None,
        description="The call's command head, which a `session_prefix` grant covers (`DELETE orders`).",
    )
    context: CallContext = Field(
        default_factory=CallContext, description="Where it runs, as its tool says (the terminal: `cwd`)."
    )
    rule: RuleVerdict | None = Field(
        default=None, description="The approval rule that asks for it, or that could not decide it."
    )
    edit_of: str | None = Field(
        default=None,
        description="The approval whose edit made this call (asked again: the edit changed its kind).",
    )


class QuestionAsk(Contract):
    """What is the answer (the agent's `ask_user`, or a running MCP tool's elicitation)?"""

    kind: Literal["question"] = Field(default="question", description="What is asked.")
    question: str = Field(description="The question, as the person sees it.")
    tool: str = Field(default="ask_user", description="Who asks: `ask_user`, or the MCP tool running.")
    elicitation_id: str | None = Field(
        default=None, description="The MCP tool's elicitation this answers (None: the agent asks)."
    )
    requested_schema: dict[str, Any] | None = Field(
        default=None, description="The JSON Schema the MCP tool wants the answer in."
    )


class GateAsk(Contract):
    """May this graph task (or one instance of a loop) run?"""

    kind: Literal["gate"] = Field(default="gate", description="What is asked.")
    task_id: str = Field(description="The task's blueprint id.")
    task_uuid: str = Field(description="The task's engine id.")
    instance: int | None = Field(default=None, description="The loop instance, when it is one.")
    prompt: str = Field(default="", description="What the gate asks.")
    assignee_id: str | None = Field(default=None, description="The agent that would run it.")
    input_data: dict[str, Any] = Field(default_factory=dict, description="The input it would run with.")


Ask = Annotated[ToolApprovalAsk | QuestionAsk | GateAsk, Field(discriminator="kind")]
"""What a request asks: one of the three, by `kind`."""


def summary_of(ask: ToolApprovalAsk | QuestionAsk | GateAsk) -> str:
    """What a request asks, on one line: the call, the question, or the gate's task."""
    if isinstance(ask, ToolApprovalAsk):
        return ask.summary or ask.tool
    if isinstance(ask, QuestionAsk):
        return (
            f"question: {ask.question}" if ask.elicitation_id is None else f"{ask.tool} asks: {ask.question}"
        )
    instance = f" #{ask.instance}" if ask.instance is not None else ""
    return f"gate of task {ask.task_id}{instance}"


def content_of(ask: ToolApprovalAsk | QuestionAsk | GateAsk) -> dict[str, Any]:
    """The ask in the seeds' `content` shape (`tool_name`, `tool_params`, `summary`...)."""
    if isinstance(ask, ToolApprovalAsk):
        context = ask.context.model_dump(mode="json", exclude_none=True)
        return {
            "tool_name": ask.tool,
            "tool_params": ask.arguments,
            "tool_description": ask.description,
            "summary": ask.summary,
            "reason": ask.reason,
            "head": ask.head,
            "grants": [str(scope) for scope in ask.grants],
            **({"context": context} if context else {}),
            **({"sandboxes": [str(profile) for profile in ask.sandboxes]} if ask.sandboxes else {}),
            **({"rule": ask.rule.model_dump(mode="json")} if ask.rule is not None else {}),
            **({"edit_of": ask.edit_of} if ask.edit_of else {}),
        }
    if isinstance(ask, QuestionAsk):
        elicited = (
            {"elicitation_id": ask.elicitation_id, "requested_schema": ask.requested_schema}
            if ask.elicitation_id is not None
            else {}
        )
        return {"question": ask.question, "tool_name": ask.tool, "summary": summary_of(ask), **elicited}
    return {
        "prompt": ask.prompt,
        "task_id": ask.task_id,
        "task_uuid": ask.task_uuid,
        **({"instance": ask.instance} if ask.instance is not None else {}),
        "assignee_id": ask.assignee_id,
        "input_data": ask.input_data,
        "summary": summary_of(ask),
    }
