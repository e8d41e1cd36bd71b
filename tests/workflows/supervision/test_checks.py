"""The one check of the one door (`workflows/supervision/checks.py`), table by table: what each
decision meets first, whatever door it came through."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from temporalio.exceptions import ApplicationError

from contracts import (
    Answer,
    Decision,
    DecisionSource,
    ErrorType,
    GateAsk,
    GrantScope,
    InteractionOutcome,
    InteractionRequest,
    InteractionType,
    QuestionAsk,
    Role,
    SandboxProfile,
    ToolApprovalAsk,
    Verdict,
)
from workflows.supervision import checks
from workflows.supervision.state import SupervisedState

AT = datetime(2026, 11, 28, 12, 0, tzinfo=UTC)
TOOL = ToolApprovalAsk(
    tool="terminal",
    arguments={"command": "touch x"},
    summary="terminal: touch x",
    grants=[GrantScope.SESSION],
    sandboxes=list(SandboxProfile),
    sandbox=SandboxProfile.WORKSPACE_WRITE,
)


def request(interaction_id: str, kind: InteractionType, ask: Any, **fields: Any) -> InteractionRequest:
    return InteractionRequest(
        interaction_id=interaction_id,
        interaction_type=kind,
        workflow_id="session:s",
        content={"summary": "x"},
        timestamp=AT,
        ask=ask,
        **fields,
    )


def ledger() -> SupervisedState:
    state = SupervisedState(last_activity=AT)
    state.pending = [
        request("tool_1", InteractionType.TOOL_APPROVAL, TOOL, approvers=["ann", "lark:ou_bo"]),
        request("tool_2", InteractionType.TOOL_APPROVAL, TOOL, approvals_required=2, approved_by=["ann"]),
        request("input_3", InteractionType.USER_INPUT, QuestionAsk(question="Which table?")),
        request("gate_4", InteractionType.CONFIRMATION, GateAsk(task_id="t", task_uuid="u", prompt="Run?")),
    ]
    state.decided = {
        "tool_0": InteractionOutcome(
            interaction_id="tool_0", approved=False, decided_by="cy", channel="lark", decided_at=AT
        )
    }
    return state


def decision(interaction_id: str, said: Verdict | Answer | None = None, **fields: Any) -> Decision:
    made: dict[str, Any] = {
        "principal": "ann",
        "role": Role.approver,
        "channel": "http",
        "source": DecisionSource.HTTP,
        **fields,
    }
    return Decision(interaction_id=interaction_id, said=said or Verdict(approved=True), **made)


YES = Verdict(approved=True)
NO = Verdict(approved=False)

CASES: list[tuple[str, Decision, ErrorType | None, str]] = [
    ("an approver among the approvers", decision("tool_1"), None, ""),
    ("the same person by another spelling", decision("tool_1", principal="ou_bo"), None, ""),
    ("an admin", decision("tool_1", role=Role.admin), None, ""),
    ("a denial by an approver", decision("tool_1", NO), None, ""),
    ("unknown", decision("tool_9"), ErrorType.INTERACTION_NOT_FOUND, "pending: tool_1, tool_2"),
    ("decided already", decision("tool_0"), ErrorType.INTERACTION_ALREADY_DECIDED, "already denied by cy"),
    ("an operator", decision("tool_1", role=Role.operator), ErrorType.ROLE_NOT_ALLOWED, "needs approver"),
    ("a viewer", decision("tool_1", role=Role.viewer), ErrorType.ROLE_NOT_ALLOWED, "has role viewer"),
    ("no role named", decision("tool_1", role=None), ErrorType.ROLE_NOT_ALLOWED, "has no role"),
    (
        "an operator's chat reply",
        decision("tool_1", role=Role.operator, source=DecisionSource.CHAT, channel="lark"),
        ErrorType.ROLE_NOT_ALLOWED,
        "needs approver",
    ),
    (
        "an operator's click, relayed",
        decision("tool_1", role=Role.operator, source=DecisionSource.RELAY),
        ErrorType.ROLE_NOT_ALLOWED,
        "needs approver",
    ),
    ("not an approver", decision("tool_1", principal="mallory"), ErrorType.APPROVER_NOT_ALLOWED, "mallory"),
    ("an admin not among them", decision("tool_1", principal="root", role=Role.admin), ErrorType.APPROVER_NOT_ALLOWED, ""),
    ("the first approver again", decision("tool_2"), ErrorType.APPROVER_ALREADY_COUNTED, "someone else"),
    ("the first approver denying", decision("tool_2", NO), None, ""),
    ("a second person", decision("tool_2", principal="bo"), None, ""),
    ("an edit under two people", decision("tool_2", Verdict(approved=True, edit={"command": "ls"}), principal="bo"), ErrorType.INVALID_RESPONSE, "approve it as it is"),
    ("an answer to a question", decision("input_3", Answer(text="orders")), None, ""),
    ("declining a question", decision("input_3", NO), None, ""),
    ("approving a question", decision("input_3", YES), ErrorType.INVALID_RESPONSE, "answer it with response_data.text"),
    ("an operator's answer", decision("input_3", Answer(text="orders"), role=Role.operator), ErrorType.ROLE_NOT_ALLOWED, ""),
    ("an answer to a tool call", decision("tool_1", Answer(text="yes")), ErrorType.INVALID_RESPONSE, "takes no answer"),
    ("an answer to a gate", decision("gate_4", Answer(text="yes")), ErrorType.INVALID_RESPONSE, "is a gate"),
    ("a gate with a grant", decision("gate_4", Verdict(approved=True, grant=GrantScope.SESSION)), ErrorType.INVALID_RESPONSE, "is a gate"),
    ("a gate approved", decision("gate_4"), None, ""),
    ("a grant offered", decision("tool_1", Verdict(approved=True, grant=GrantScope.SESSION)), None, ""),
    ("a grant not offered", decision("tool_1", Verdict(approved=True, grant=GrantScope.SESSION_PREFIX)), ErrorType.INVALID_RESPONSE, "possible: session"),
    ("a grant with an edit", decision("tool_1", Verdict(approved=True, grant=GrantScope.SESSION, edit={"command": "ls"})), ErrorType.INVALID_RESPONSE, "not both"),
    ("an edit with a denial", decision("tool_1", Verdict(approved=False, edit={"command": "ls"})), ErrorType.INVALID_RESPONSE, "only goes with approved=true"),
    ("a narrower sandbox", decision("tool_1", Verdict(approved=True, sandbox=SandboxProfile.READ_ONLY)), None, ""),
    ("the same sandbox", decision("tool_1", Verdict(approved=True, sandbox=SandboxProfile.WORKSPACE_WRITE)), None, ""),
    ("a wider sandbox by an approver", decision("tool_1", Verdict(approved=True, sandbox=SandboxProfile.FULL)), ErrorType.ROLE_NOT_ALLOWED, "needs admin"),
    ("a wider sandbox by an admin", decision("tool_1", Verdict(approved=True, sandbox=SandboxProfile.FULL), role=Role.admin), None, ""),
    ("a timeout", decision("tool_1", NO, principal="system:timeout", role=None, source=DecisionSource.TIMEOUT), None, ""),
    ("a rule's own call", decision("tool_7", YES, principal="rule:r", role=None, source=DecisionSource.RULE), None, ""),
]  # fmt: skip


@pytest.mark.parametrize(("case", "made", "refusal", "words"), CASES, ids=[c[0] for c in CASES])
def test_every_door_meets_the_same_check(
    case: str, made: Decision, refusal: ErrorType | None, words: str
) -> None:
    if refusal is None:
        checks.check(ledger(), made)
        return
    with pytest.raises(ApplicationError) as raised:
        checks.check(ledger(), made)
    assert raised.value.type == refusal, raised.value.message
    assert words in raised.value.message


def test_the_order_is_role_then_approvers_then_two_people_then_the_floor() -> None:
    """A decision wrong in every way is refused for its role first, then (an approver) for not being
    among the approvers, then (among them) as the same person twice, then for what it says."""
    wrong = decision(
        "tool_2", Verdict(approved=True, edit={"command": "ls"}), principal="mallory", role=Role.operator
    )
    state = ledger()
    state.pending[1].approvers = ["ann", "bo"]
    seen = []
    for fix in ({"role": Role.approver}, {"principal": "ann"}, {"principal": "bo"}, {}):
        with pytest.raises(ApplicationError) as raised:
            checks.check(state, wrong)
        seen.append(raised.value.type)
        wrong = wrong.model_copy(update=fix)
    assert seen == [
        ErrorType.ROLE_NOT_ALLOWED,
        ErrorType.APPROVER_NOT_ALLOWED,
        ErrorType.APPROVER_ALREADY_COUNTED,
        ErrorType.INVALID_RESPONSE,
    ]
