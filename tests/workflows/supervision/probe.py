"""A workflow that opens the requests it is given and takes the decisions it is given, one by one,
through the one door's signal path (`Decisions.decide`: a refusal is audited, not raised), and
returns what came of each (`test_decisions_property`). It lives in a module of its own so that a
worker can pass it through its sandbox (`tests` passed through, as `workflows` and `contracts` are).
"""

from __future__ import annotations

from pydantic import BaseModel, Field
from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from contracts import (
        Ask,
        AuditEntry,
        Decision,
        GateAsk,
        GrantScope,
        InteractionOutcome,
        InteractionRequest,
        InteractionType,
        QuestionAsk,
        SandboxProfile,
        ToolApprovalAsk,
    )
    from workflows.supervision.ports import Policy
    from workflows.supervision.state import SupervisedState
    from workflows.supervision.supervisor import supervise

STEMS = {
    InteractionType.TOOL_APPROVAL: "tool",
    InteractionType.USER_INPUT: "input",
    InteractionType.CONFIRMATION: "gate",
}
"""The stem each kind of request is opened with, as the agent and the graph open them."""
ARGUMENTS = {"command": "touch x"}


class Asked(BaseModel):
    """One request to open: what it asks, who may decide it, how many must approve, what is offered."""

    kind: InteractionType
    approvers: list[str] = Field(default_factory=list)
    approvals_required: int = 1
    grants: list[GrantScope] = Field(default_factory=list)
    sandboxes: list[SandboxProfile] = Field(default_factory=list)
    sandbox: SandboxProfile | None = None
    """The sandbox the call runs in unless changed (the floor a wider choice needs an admin above)."""


class ProbeInput(BaseModel):
    """The requests to open (in order: the n-th gets id `<stem>_<n>`) and the decisions to take."""

    requests: list[Asked]
    decisions: list[Decision]


class Step(BaseModel):
    """What one decision left: the audit entries it added, and every outcome decided after it."""

    audit: list[AuditEntry]
    decided: dict[str, InteractionOutcome]


class ProbeResult(BaseModel):
    """The requests as opened, each decision's step, and the state at the end."""

    opened: list[InteractionRequest]
    steps: list[Step]
    pending: list[InteractionRequest]
    decided: dict[str, InteractionOutcome]
    audit: list[AuditEntry]


def opening(asked: Asked) -> Ask:
    """The typed ask of a request, as the agent and the graph open them."""
    if asked.kind == InteractionType.USER_INPUT:
        return QuestionAsk(question="Which table?")
    if asked.kind == InteractionType.CONFIRMATION:
        return GateAsk(task_id="t", task_uuid="u", prompt="Run task t?")
    return ToolApprovalAsk(
        tool="terminal",
        arguments=ARGUMENTS,
        summary="terminal: touch x",
        head="touch",
        grants=asked.grants,
        sandboxes=asked.sandboxes,
        sandbox=asked.sandbox,
    )


@workflow.defn(name="DecisionsProbe")
class DecisionsProbe:
    """Supervision alone: requests opened in `@workflow.init`, decisions taken in `run`."""

    @workflow.init
    def __init__(self, probe: ProbeInput) -> None:
        """Wire supervision (no stream carried, no chat, no status) and open the requests."""
        self._state = SupervisedState(last_activity=workflow.now())
        self._chunks, self._supervisor = supervise(
            workflow.info().workflow_id,
            "decisions probe",
            self._state,
            Policy(timeout_seconds=3600),
            stream=None,
            show_status=lambda _status: None,
            refresh=lambda: None,
        )
        self._opened: list[InteractionRequest] = []
        for asked in probe.requests:
            request = self._supervisor.requests.open(
                STEMS[asked.kind],
                opening(asked),
                approvers=list(asked.approvers),
                approvals_required=asked.approvals_required,
            )
            self._opened.append(request.model_copy(deep=True))

    @workflow.run
    async def run(self, probe: ProbeInput) -> ProbeResult:
        """Take each decision by the signal path and record its step; the state at the end."""
        state = self._state
        steps: list[Step] = []
        for decision in probe.decisions:
            before = len(state.audit)
            self._supervisor.decisions.decide(decision)
            steps.append(
                Step(
                    audit=[entry.model_copy() for entry in state.audit[before:]],
                    decided={key: outcome.model_copy(deep=True) for key, outcome in state.decided.items()},
                )
            )
        self._chunks.close()
        await workflow.wait_condition(workflow.all_handlers_finished)
        return ProbeResult(
            opened=self._opened, steps=steps, pending=state.pending, decided=state.decided, audit=state.audit
        )
