"""What an agent returns: `AgentResult`, its only output."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from .agents import AgentRef, AgentSpec
from .artifacts import ArtifactRef
from .base import CompactContract, Contract
from .blueprint import PlanBlueprint
from .experience import TurnToRemember
from .messages import UniversalMessage
from .rules import RuleContext

# ToolAssessment is defined after this module (it names ToolCallRequest): contracts.tools rebuilds
# AgentResult once it is.
if TYPE_CHECKING:
    from .tools import ToolAssessment


class FinalAnswer(Contract):
    """The agent is done: this is its answer."""

    content: Any = Field(default=None, description="The answer: text or any JSON value.")
    artifact: ArtifactRef | None = Field(
        default=None,
        description="Set when the answer was too large to carry: `content` is then a preview and "
        "the whole answer is this artifact.",
    )


class ToolCallRequest(Contract):
    """The agent asks for a tool to be run; the workflow decides whether and when."""

    tool_id: str = Field(description="Name of the tool (a ToolDescriptor's `name`).")
    arguments: dict[str, Any] = Field(description="Arguments for the tool.")
    call_id: str | None = Field(
        default=None,
        description="The model's id for this call (extension); the tool result goes back with it.",
    )


class ToolCallBatch(Contract):
    """Several tool calls proposed in one model turn (an extension of the intent union).

    Each call is gated by its tool's approval policy and run in order; all results (and
    denials) go back to the agent together, so a denial of one never drops the others.
    """

    calls: list[ToolCallRequest] = Field(min_length=1, description="The calls, in the model's order.")


class AgentIntent(Contract):
    """What the agent wants next, with its reasoning."""

    thought: str = Field(description="The agent's reasoning, shown to people as-is.")
    intent: FinalAnswer | ToolCallRequest | ToolCallBatch | PlanBlueprint = Field(
        description="An answer, a tool call, several tool calls, or a plan to run as a task graph."
    )


FailureType = Literal[
    "LLM_REFUSAL",
    "TOOL_EXECUTION_FAILED",
    "VALIDATION_ERROR",
    "RESOURCE_UNAVAILABLE",
    "AUTHENTICATION_FAILED",
    "QUOTA_EXCEEDED",
    "MODEL_ERROR",
]


class FailureDetails(Contract):
    """Why an agent step failed."""

    type: FailureType = Field(description="Kind of failure.")
    message: str = Field(description="What went wrong, for people; never contains secrets.")


class AgentResult(CompactContract):
    """The one standard output of every agent step."""

    status: Literal["SUCCESS", "FAILURE"] = Field(description="Whether the step succeeded.")
    output: AgentIntent = Field(description="The agent's intent (also set on failure).")
    failure_details: FailureDetails | None = Field(default=None, description="Set when status is FAILURE.")
    metadata: dict[str, Any] | None = Field(
        default=None, description="Adapter-specific extras (model, token usage, call ids)."
    )
    remembered: bool = Field(
        default=False,
        description="The step answered and recorded its turn in the experience index (`AgentStepInput.remember`).",
    )
    assessment: ToolAssessment | None = Field(
        default=None,
        description="The assessment of the one call the step proposes, made by the step itself "
        "(`AgentStepInput.assess`); None when it proposed no single call or was not asked to.",
    )


class StepAssessment(CompactContract):
    """What a quick step needs to assess the call it proposes as the `assess_tool_call` activity would
    (`assessed-in-quick-step`): the tools' states and the session's rule context."""

    states: dict[str, dict[str, Any]] = Field(
        default_factory=dict,
        description="For each tool that keeps state in its worker: the metadata of its last result "
        "while that worker still holds it (`AssessRequest.state`).",
    )
    rules: RuleContext | None = Field(default=None, description="`AssessRequest.rules`.")


class AgentStepInput(CompactContract):
    """Input of the `agent_step` activity: everything the agent may see, nothing more."""

    agent_id: str = Field(description="`Agent:<name>` of the agent to run.")
    owner_id: str = Field(
        default="",
        description="Workflow id of the session or task asking; empty: the workflow that scheduled "
        "the step (a session's steps: the worker reads it from the activity's info).",
    )
    messages: list[UniversalMessage] = Field(
        default_factory=list, description="The conversation, oldest first."
    )
    tools: list[str] = Field(
        default_factory=list,
        description="Names of the tools it may call (with `agent_ref`, the worker fills them in from "
        "the declaration).",
    )
    input_data: dict[str, Any] | None = Field(
        default=None, description="Task inputs (graph tasks); None for chat sessions."
    )
    agent: AgentSpec | None = Field(
        default=None,
        description="The agent's declaration as resolved when the work was submitted (framework, "
        "model, instruction, tools); None in histories from before agent declarations, and "
        "with `agent_ref`.",
    )
    agent_ref: AgentRef | None = Field(
        default=None,
        description="The declaration by reference (a session's steps): the worker runs the one its "
        "registry has under `agent_ref.name`, if it is the one the session started with.",
    )
    remember: TurnToRemember | None = Field(
        default=None,
        description="The session turn this step belongs to: a step that answers records it in the "
        "experience index (None: the workflow records its turns itself, or keeps none).",
    )
    assess: StepAssessment | None = Field(
        default=None,
        description="Set for a quick step: one that proposes a single tool call assesses it too "
        "(`AgentResult.assessment`), sparing the workflow the `assess_tool_call` local activity.",
    )
