"""What a decision must pass, whatever door it came through: the one check of the one door.

`check` is the validator of `decide_checked` and the guard of `Decisions.take`, which the signal
twin, chat replies, card clicks, relayed decisions, rules, grants and timeouts all go through. In
this order, for every door alike:
1. the request: pending (unknown: `InteractionNotFound`, 404; decided: `InteractionAlreadyDecided`,
   409); a rule or a grant decides a call of its own, asked of nobody;
2. the role: a person's decision needs an approver or higher (`RoleNotAllowed`, 403);
3. the request's approvers (`ApproverNotAllowed`, 403);
4. the two-person rule: one person counts once (`ApproverAlreadyCounted`, 409);
5. the policy floor: what was said fits what was asked (an answer for a question, a verdict for
   a call or a gate; an edit, a grant or a sandbox only with approving a call, only as offered,
   none under the two-person rule: `InvalidResponse`, 422), and a sandbox wider than the one the
   session runs calls in needs an admin (`RoleNotAllowed`, 403).
Each refusal is a typed `ApplicationError`, raised before anything reaches history. Pure.
"""

from __future__ import annotations

from typing import Any

from temporalio import workflow
from temporalio.exceptions import ApplicationError

with workflow.unsafe.imports_passed_through():
    from contracts import (
        PERSON_SOURCES,
        Decision,
        DecisionSource,
        ErrorType,
        GateAsk,
        InteractionRequest,
        QuestionAsk,
        Role,
        SandboxProfile,
        ToolApprovalAsk,
        Verdict,
    )
    from contracts.times import utc_text

    from .state import SupervisedState

from .two_people import check_second_approver

STANDING = (DecisionSource.RULE, DecisionSource.GRANT)
"""Decisions asked of nobody: a rule or a grant decides a call as it is proposed."""
WIDTH = (SandboxProfile.READ_ONLY, SandboxProfile.WORKSPACE_WRITE, SandboxProfile.FULL)
"""Sandboxes from the narrowest to the widest."""


def _refused(message: str, error_type: ErrorType) -> ApplicationError:
    return ApplicationError(message, type=error_type, non_retryable=True)


def find_pending(ledger: SupervisedState, interaction_id: str) -> InteractionRequest | None:
    """The pending interaction with this id, if any."""
    return next((r for r in ledger.pending if r.interaction_id == interaction_id), None)


def may_decide(request: InteractionRequest, principal: str) -> bool:
    """Whether `principal` is among `request`'s approvers (empty approvers: anyone)."""
    return not request.approvers or principal in request.approvers


def check(ledger: SupervisedState, decision: Decision) -> InteractionRequest | None:
    """The pending request `decision` decides (None: a rule's or a grant's own call), or the typed
    refusal: see the module docstring for the order and the error types."""
    interaction_id = decision.interaction_id
    done = ledger.decided.get(interaction_id)
    if done is not None:
        verb = "approved" if done.approved else "denied"
        raise _refused(
            f"interaction {interaction_id!r} was already {verb} by {done.decided_by} "
            f"({done.channel}) at {utc_text(done.decided_at)}; a decision cannot be changed",
            ErrorType.INTERACTION_ALREADY_DECIDED,
        )
    if decision.source in STANDING:
        return None
    request = find_pending(ledger, interaction_id)
    if request is None:
        known = ", ".join(r.interaction_id for r in ledger.pending) or "none"
        raise _refused(
            f"no interaction {interaction_id!r} is waiting here; pending: {known}",
            ErrorType.INTERACTION_NOT_FOUND,
        )
    if decision.source in PERSON_SOURCES:
        check_person(request, decision)
    return request  # else a timeout, a cancel, a withdrawal: the run's own denial


def check_person(request: InteractionRequest, decision: Decision) -> None:
    """A person's decision on a pending request: their role, the request's approvers, the two-person
    rule, the policy floor (a session checks a request its graph relays this way before passing the
    decision on; the graph checks it again)."""
    check_role(decision)
    if not may_decide(request, decision.principal):
        raise _refused(
            f"{decision.principal!r} may not decide interaction {request.interaction_id!r}; "
            f"allowed approvers: {', '.join(request.approvers)}",
            ErrorType.APPROVER_NOT_ALLOWED,
        )
    if isinstance(decision.said, Verdict) and decision.said.approved:
        check_second_approver(request, decision.principal)
    check_floor(request, decision)


def check_role(decision: Decision) -> None:
    """A person decides only as an approver or higher (`RoleNotAllowed`)."""
    role = decision.role
    if role is None or role < Role.approver:
        has = f"has role {role}" if role is not None else "has no role (the door that sent it named none)"
        raise _refused(
            f"{decision.principal} {has}; deciding interaction {decision.interaction_id!r} needs approver "
            "or higher",
            ErrorType.ROLE_NOT_ALLOWED,
        )


def _invalid(message: str) -> ApplicationError:
    return _refused(message, ErrorType.INVALID_RESPONSE)


def check_floor(request: InteractionRequest, decision: Decision) -> None:
    """What was said must fit what was asked, within the policy's floor (see the module docstring)."""
    ask, said = request.ask, decision.said
    where = f"interaction {request.interaction_id!r}"
    extras = [
        name for name in ("edit", "grant", "sandbox") if isinstance(said, Verdict) and getattr(said, name)
    ]
    if isinstance(ask, QuestionAsk):
        if isinstance(said, Verdict) and (said.approved or extras):
            raise _invalid(
                f"{where} is a question: answer it with response_data.text (a non-empty string), "
                "or decline with approved=false"
            )
        return
    if not isinstance(said, Verdict):
        kind = "a tool approval" if isinstance(ask, ToolApprovalAsk) else "a gate"
        raise _invalid(f"{where} is {kind}: approve or deny it (`approved`); it takes no answer text")
    if not extras:
        return
    if isinstance(ask, GateAsk):
        raise _invalid(f"{where} is a gate: approve or deny it; it takes no {', '.join(extras)}")
    if not said.approved:
        raise _invalid(
            f"response_data.{_wire(extras[0])} only goes with approved=true (a denial runs nothing)"
        )
    if request.approvals_required > 1:
        raise _invalid(
            f"{where} needs {request.approvals_required} approvers, who approve the same call: it runs "
            f"as proposed, so response_data.{_wire(extras[0])} is not possible (approve it as it is, or deny it)"
        )
    if said.grant is not None:
        _offered(ask, "grant", said.grant, ask.grants, "none (its tool or policy allows no grants)")
        if said.edit is not None:
            raise _invalid("grant the call as proposed, or edit its arguments; not both in one decision")
    if said.sandbox is not None:
        _offered(
            ask, "sandbox", said.sandbox, ask.sandboxes, "none (its tool does not run in a sandbox here)"
        )
        check_sandbox(ask, decision, said.sandbox)


def _wire(name: str) -> str:
    """The name the HTTP body gives a field of a verdict (`edit` is `arguments` there)."""
    return "arguments" if name == "edit" else name


def _offered(ask: ToolApprovalAsk, name: str, value: str, possible: list[Any], none: str) -> None:
    if value not in possible:
        choices = ", ".join(str(choice) for choice in possible) or none
        raise _invalid(
            f"response_data.{name} {str(value)!r} is not possible for {ask.summary or ask.tool}; possible: {choices}"
        )


def check_sandbox(ask: ToolApprovalAsk, decision: Decision, chosen: SandboxProfile) -> None:
    """A sandbox wider than the one the call would run in (the floor the deployment, the agent and
    the session set) needs an admin."""
    floor = ask.sandbox
    if (
        floor is None
        or chosen not in WIDTH
        or floor not in WIDTH
        or WIDTH.index(chosen) <= WIDTH.index(floor)
    ):
        return
    if decision.role is not None and decision.role >= Role.admin:
        return
    raise _refused(
        f"{decision.principal} has role {decision.role}; running {ask.summary or ask.tool} in sandbox "
        f"{chosen!s} (wider than {floor!s}, where it runs unless changed) needs admin",
        ErrorType.ROLE_NOT_ALLOWED,
    )
