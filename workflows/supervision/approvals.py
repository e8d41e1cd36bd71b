"""Approvals: pending interactions, decisions on them, and the audit trail.

Used by every workflow that asks people for approval (sessions now, graph tasks later).
Validation is split from mutation so an update's validator can reject bad input before
anything reaches history, while its signal twin records the rejection instead of failing.
Only deterministic code here: time comes from `workflow.now()`.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Protocol

from temporalio import workflow
from temporalio.exceptions import ApplicationError

with workflow.unsafe.imports_passed_through():
    from contracts import (
        AuditEntry,
        ErrorType,
        InteractionOutcome,
        InteractionRequest,
        InteractionResponse,
        Principal,
    )


class Ledger(Protocol):
    """Where approvals are kept: part of the owning workflow's state model."""

    pending: list[InteractionRequest]
    decided: dict[str, InteractionOutcome]
    audit: list[AuditEntry]


def _when(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%d %H:%M:%S UTC")


def find_pending(ledger: Ledger, interaction_id: str) -> InteractionRequest | None:
    """The pending interaction with this id, if any."""
    return next((r for r in ledger.pending if r.interaction_id == interaction_id), None)


def may_decide(request: InteractionRequest, principal: str) -> bool:
    """Whether `principal` is allowed to answer `request` (empty approvers: anyone)."""
    return not request.approvers or principal in request.approvers


def check_response(ledger: Ledger, response: InteractionResponse) -> InteractionRequest:
    """Return the pending request a response answers, or raise a typed ApplicationError.

    Error types (the API maps them to HTTP statuses): `InteractionNotFound` (404),
    `InteractionAlreadyDecided` (409), `ApproverNotAllowed` (403).
    """
    interaction_id = response.interaction_id or ""
    done = ledger.decided.get(interaction_id)
    if done is not None:
        verb = "approved" if done.approved else "denied"
        raise ApplicationError(
            f"interaction {interaction_id!r} was already {verb} by {done.decided_by} "
            f"({done.channel}) at {_when(done.decided_at)}; a decision cannot be changed",
            type=ErrorType.INTERACTION_ALREADY_DECIDED,
            non_retryable=True,
        )
    request = find_pending(ledger, interaction_id)
    if request is None:
        known = ", ".join(r.interaction_id for r in ledger.pending) or "none"
        raise ApplicationError(
            f"no interaction {interaction_id!r} is waiting here; pending: {known}",
            type=ErrorType.INTERACTION_NOT_FOUND,
            non_retryable=True,
        )
    principal = response.principal or Principal.ANONYMOUS
    if not may_decide(request, principal):
        raise ApplicationError(
            f"{principal!r} may not decide interaction {interaction_id!r}; "
            f"allowed approvers: {', '.join(request.approvers)}",
            type=ErrorType.APPROVER_NOT_ALLOWED,
            non_retryable=True,
        )
    return request


def announced(request: InteractionRequest, **extra: Any) -> dict[str, Any]:
    """The metadata of the chunk that shows a request on a stream (where it is, who may answer, until when)."""
    return {
        **extra,
        "interaction_id": request.interaction_id,
        "interaction_type": request.interaction_type,
        "workflow_id": request.task_id,
        "requires_approval": True,
        "approvers": request.approvers,
        "expires_at": request.expires_at.isoformat() if request.expires_at else None,
    }


def open_request(ledger: Ledger, request: InteractionRequest) -> None:
    """Record a new pending interaction and its `requested` audit entry."""
    ledger.pending.append(request)
    ledger.audit.append(
        AuditEntry(
            kind="requested",
            at=workflow.now(),
            principal=request.requested_by or Principal.ANONYMOUS,
            channel=str(request.metadata.get("channel", "system")),
            interaction_id=request.interaction_id,
            comment=str(request.content.get("summary", "")) if isinstance(request.content, dict) else None,
        )
    )


def decide(
    ledger: Ledger,
    interaction_id: str,
    *,
    approved: bool,
    principal: str,
    channel: str,
    comment: str | None,
) -> InteractionOutcome:
    """Move a pending interaction to decided and audit it. The caller validated it."""
    ledger.pending[:] = [r for r in ledger.pending if r.interaction_id != interaction_id]
    outcome = InteractionOutcome(
        interaction_id=interaction_id,
        approved=approved,
        decided_by=principal,
        channel=channel,
        decided_at=workflow.now(),
        comment=comment,
    )
    ledger.decided[interaction_id] = outcome
    ledger.audit.append(
        AuditEntry(
            kind="approved" if approved else "denied",
            at=outcome.decided_at,
            principal=principal,
            channel=channel,
            interaction_id=interaction_id,
            comment=comment,
        )
    )
    return outcome


def record_rejection(ledger: Ledger, response: InteractionResponse, reason: str) -> None:
    """Audit a decision attempt that was refused (signals cannot answer with an error)."""
    ledger.audit.append(
        AuditEntry(
            kind="rejected",
            at=workflow.now(),
            principal=response.principal or Principal.ANONYMOUS,
            channel=response.channel,
            interaction_id=response.interaction_id,
            comment=reason,
        )
    )
