"""What the agent loop needs from the workflow that runs it (`LoopHost`), and how a turn ended
(`LoopOutcome`). Sessions and graph tasks both host it through `supervised.SupervisedHost`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Protocol

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from contracts import (
        ArtifactRef,
        FailureDetails,
        InteractionOutcome,
        PlanBlueprint,
        RuleContext,
        SandboxProfile,
        ToolAssessment,
        ToolCallRequest,
        ToolResult,
    )

from ..stream.chunks import Publish


class LoopHost(Protocol):
    """What the loop needs from the workflow that runs it."""

    @property
    def owner_id(self) -> str:
        """Workflow id of the session or task."""
        ...

    publish: Publish
    """Publish one chunk on the workflow's stream."""

    async def ask_approval(
        self, call: ToolCallRequest, assessment: ToolAssessment, *, edit_of: InteractionOutcome | None = None
    ) -> InteractionOutcome:
        """Open an interaction and wait for its decision (or timeout, or cancel); a grant may allow it at once."""
        ...

    async def ask_user(self, call: ToolCallRequest) -> InteractionOutcome:
        """Ask the person the call's `question` and wait for the answer (or timeout, or cancel)."""
        ...

    async def checkpoint(self) -> bool:
        """Wait while paused; False when the work was cancelled."""
        ...

    def tool_finished(self, interaction_id: str | None, result: ToolResult) -> None:
        """Record the result of an approved run (it answers the approver's update)."""
        ...

    @property
    def rules(self) -> RuleContext | None:
        """What approval rules read of the run: its project, person and profile."""
        ...

    @property
    def worker_queues(self) -> dict[str, str]:
        """Per worker-bound tool, the task queue of the worker holding its state (`LOST`: gone)."""
        ...

    @property
    def asked(self) -> int:
        """Requests opened for people so far in this run (a count that only grows)."""
        ...

    @property
    def sandbox(self) -> SandboxProfile | None:
        """The sandbox the session or its agent chose for approved calls (None: the tool's default)."""
        ...

    @property
    def tool_states(self) -> dict[str, dict[str, Any]]:
        """Per worker-bound tool, the metadata of its last result (where it left its state)."""
        ...


@dataclass
class LoopOutcome:
    """How a turn ended."""

    kind: Literal["answer", "plan", "failure", "cancelled", "max_turns"]
    answer: Any = None
    artifact: ArtifactRef | None = None
    """The whole answer when it was too large to carry (`answer` is then its preview)."""
    plan: PlanBlueprint | None = None
    failure: FailureDetails | None = None
    remembered: bool = False
    """The answering step recorded the turn in the experience index (`AgentStepInput.remember`)."""
