"""Two-person approvals and escalation of requests nobody decides.

A request with `approvals_required = 2` stays pending after its first approval, which is counted
(`approved_by`, audited as `approval_counted`, shown as "1/2" on every channel); a second,
distinct approver decides it, and a denial by anyone allowed denies it. A request with
`escalate_to` that is still undecided at `escalate_at` also asks those people (they may decide
from then on; audited as `escalated`). Pure functions over the state; time from `workflow.now()`.
"""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow
from temporalio.exceptions import ApplicationError

with workflow.unsafe.imports_passed_through():
    from contracts import AuditEntry, ErrorType, InteractionOutcome, InteractionRequest, Principal

from .ports import SupervisedState


def escalate_at(timeout: timedelta, after_seconds: int | None) -> timedelta:
    """How long after it opens a request escalates: as configured, or half its timeout."""
    return timedelta(seconds=after_seconds) if after_seconds else timeout / 2


def person(principal: str) -> str:
    """Who a principal is: a Lark open_id with or without its `lark:` prefix is the same person."""
    return principal.removeprefix("lark:")


def already_approved(request: InteractionRequest, principal: str) -> bool:
    """Whether this person's approval was already counted (under either spelling of their id)."""
    return person(principal) in {person(p) for p in request.approved_by}


def check_second_approver(request: InteractionRequest, principal: str) -> None:
    """Validator: the same person cannot count twice toward the two-person rule (409)."""
    if already_approved(request, principal):
        raise ApplicationError(
            f"{principal!r} already approved interaction {request.interaction_id!r} "
            f"({len(request.approved_by)}/{request.approvals_required}); the next approval must come "
            "from someone else",
            type=ErrorType.APPROVER_ALREADY_COUNTED,
            non_retryable=True,
        )


def needs_more(request: InteractionRequest) -> bool:
    """Whether one more approval would still not be enough."""
    return len(request.approved_by) + 1 < request.approvals_required


def count(
    state: SupervisedState, request: InteractionRequest, principal: str, channel: str
) -> InteractionOutcome:
    """Count an approval that does not decide yet; the (incomplete) outcome the approver is answered."""
    request.approved_by.append(principal)
    now = workflow.now()
    so_far = f"{len(request.approved_by)}/{request.approvals_required}"
    state.audit.append(
        AuditEntry(
            kind="approval_counted",
            at=now,
            principal=principal,
            channel=channel,
            interaction_id=request.interaction_id,
            comment=f"{so_far} approvals: waiting for another approver",
        )
    )
    return InteractionOutcome(
        interaction_id=request.interaction_id,
        approved=True,
        decided_by=principal,
        channel=channel,
        decided_at=now,
        comment=f"{so_far} approvals: another, different approver must approve too",
        approvals=list(request.approved_by),
        complete=False,
    )


def escalate(state: SupervisedState, request: InteractionRequest) -> None:
    """Ask `escalate_to` too (when the request names approvers at all: else anyone may already); audited."""
    request.escalated = True
    if request.approvers:
        request.approvers.extend([p for p in request.escalate_to if p not in request.approvers])
    waited = (request.escalate_at or workflow.now()) - request.timestamp
    state.audit.append(
        AuditEntry(
            kind="escalated",
            at=workflow.now(),
            principal=Principal.TIMEOUT,
            channel="system",
            interaction_id=request.interaction_id,
            comment=f"no decision within {waited}; now also asking {', '.join(request.escalate_to)}",
        )
    )
