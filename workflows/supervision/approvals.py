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
        InteractionType,
        Principal,
    )


from .escalation import check_second_approver, person


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
    return not request.approvers or person(principal) in {person(p) for p in request.approvers}


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
    if response.approved:
        check_second_approver(request, principal)
    check_response_data(request, response)
    return request


def _invalid(message: str) -> ApplicationError:
    return ApplicationError(message, type=ErrorType.INVALID_RESPONSE, non_retryable=True)


def check_response_data(request: InteractionRequest, response: InteractionResponse) -> None:
    """`response_data` must fit the request: `text` answers a question; `arguments`, `grant` and
    `sandbox` go with approving a tool call (a grant and a sandbox the request offers). Raises
    `InvalidResponse` (422)."""
    data = response.response_data or {}
    where = f"interaction {request.interaction_id!r}"
    if request.interaction_type == InteractionType.USER_INPUT:
        unknown = sorted(set(data) - {"text"})
        if unknown:
            raise _invalid(f"{where} is a question: response_data takes only `text`, not {unknown}")
        text = data.get("text")
        if response.approved and (not isinstance(text, str) or not text.strip()):
            raise _invalid(
                f"{where} is a question: answer it with response_data.text (a non-empty string), "
                "or decline with approved=false"
            )
        return
    if request.interaction_type != InteractionType.TOOL_APPROVAL:
        return
    unknown = sorted(set(data) - {"arguments", "grant", "sandbox"})
    if unknown:
        raise _invalid(
            f"{where} is a tool approval: response_data takes `arguments`, `grant` and `sandbox`, not {unknown}"
        )
    if data and not response.approved:
        raise _invalid(
            f"response_data.{next(iter(data))} only goes with approved=true (a denial runs nothing)"
        )
    if data and request.approvals_required > 1:
        raise _invalid(
            f"{where} needs {request.approvals_required} approvers, who approve the same call: it runs "
            f"as proposed, so response_data.{next(iter(data))} is not possible (approve it as it is, or deny it)"
        )
    if "arguments" in data and not isinstance(data["arguments"], dict):
        raise _invalid(
            f"response_data.arguments must be an object of the tool's arguments, "
            f"got {type(data['arguments']).__name__}"
        )
    if "grant" in data:
        _offered(request, data, "grant", "grants", "none (its tool or policy allows no grants)")
        if "arguments" in data:
            raise _invalid("grant the call as proposed, or edit its arguments; not both in one decision")
    if "sandbox" in data:
        _offered(request, data, "sandbox", "sandboxes", "none (its tool does not run in a sandbox here)")


def _offered(request: InteractionRequest, data: dict[str, Any], key: str, offers: str, none: str) -> None:
    """`response_data[key]` must be one of what the request offers (`content[offers]`)."""
    content = request.content if isinstance(request.content, dict) else {}
    possible = [str(choice) for choice in content.get(offers, [])]
    if data[key] not in possible:
        where = content.get("summary") or f"interaction {request.interaction_id!r}"
        raise _invalid(
            f"response_data.{key} {data[key]!r} is not possible for {where}; possible: {', '.join(possible) or none}"
        )


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


def audit_outcome(
    audit: list[AuditEntry], kind: str, outcome: InteractionOutcome, comment: str | None
) -> None:
    """Audit what a decision did (`approved`, `granted`, `edited`, ...): by whom, where, when."""
    audit.append(
        AuditEntry(
            kind=kind,
            at=outcome.decided_at,
            principal=outcome.decided_by,
            channel=outcome.channel,
            interaction_id=outcome.interaction_id,
            comment=comment,
        )
    )


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
    response_data: dict[str, Any] | None = None,
) -> InteractionOutcome:
    """Move a pending interaction to decided and audit it (a question: answered/declined). The caller validated it."""
    request = find_pending(ledger, interaction_id)
    question = request is not None and request.interaction_type == InteractionType.USER_INPUT
    ledger.pending[:] = [r for r in ledger.pending if r.interaction_id != interaction_id]
    outcome = InteractionOutcome(
        interaction_id=interaction_id,
        approved=approved,
        decided_by=principal,
        channel=channel,
        decided_at=workflow.now(),
        comment=comment,
        response_data=response_data,
    )
    ledger.decided[interaction_id] = outcome
    kinds = ("answered", "declined") if question else ("approved", "denied")
    audit_outcome(ledger.audit, kinds[0] if approved else kinds[1], outcome, comment)
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
