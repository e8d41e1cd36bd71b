"""Grants: standing approvals a person gives while approving a call, matched, used and revoked.

An approval with `response_data.grant` (`session`: the same tool with the same arguments;
`session_prefix`: the same tool and command head, e.g. `DELETE orders`) records a `Grant` in
the supervised state; later calls it matches run without asking, each audited as allowed by it.
Pure functions over the state: time from `workflow.now()`, no I/O.
"""

from __future__ import annotations

from typing import Any, Protocol

from temporalio import workflow
from temporalio.exceptions import ApplicationError

with workflow.unsafe.imports_passed_through():
    from contracts import (
        AuditEntry,
        ErrorType,
        Grant,
        GrantRevocation,
        GrantScope,
        InteractionOutcome,
        InteractionRequest,
        Principal,
        SandboxProfile,
        ToolAssessment,
        ToolCallRequest,
    )

from .approvals import audit_outcome
from .sandbox import granted


class GrantLedger(Protocol):
    """The part of a state model grants live in."""

    grants: list[Grant]
    audit: list[AuditEntry]


def matching(ledger: GrantLedger, call: ToolCallRequest, assessment: ToolAssessment) -> Grant | None:
    """The grant in force that allows this call, if any (the oldest). A grant given for calls that
    run in a sandbox never allows one that cannot (input typed into a program at its prompt)."""
    for grant in ledger.grants:
        if grant.revoked_at is not None or grant.tool_id != call.tool_id:
            continue
        if grant.sandbox not in (None, SandboxProfile.FULL) and assessment.sandbox is None:
            continue
        if grant.scope == GrantScope.SESSION and grant.arguments == call.arguments:
            return grant
        if grant.scope == GrantScope.SESSION_PREFIX and assessment.head and grant.head == assessment.head:
            return grant
    return None


def record(
    ledger: GrantLedger, request: InteractionRequest, outcome: InteractionOutcome, scope: str
) -> Grant:
    """The grant an approval made (validated by `approvals.check_response`), audited."""
    content: dict[str, Any] = request.content if isinstance(request.content, dict) else {}
    grant = Grant(
        grant_id=f"grant_{len(ledger.grants) + 1}",
        scope=GrantScope(scope),
        tool_id=str(content.get("tool_name", "")),
        arguments=content.get("tool_params") if scope == GrantScope.SESSION else None,
        head=content.get("head") if scope == GrantScope.SESSION_PREFIX else None,
        summary=str(content.get("summary", "")),
        granted_by=outcome.decided_by,
        channel=outcome.channel,
        granted_at=outcome.decided_at,
        interaction_id=outcome.interaction_id,
        sandbox=granted(content, outcome.response_data),
    )
    ledger.grants.append(grant)
    audit_outcome(
        ledger.audit, "granted", outcome, f"{grant.grant_id}: {describe(grant)} for the rest of the session"
    )
    return grant


def describe(grant: Grant) -> str:
    """`sql DELETE orders (any statement)` or `sql: DELETE FROM orders WHERE id = 2 (exactly)`."""
    where = f", in sandbox {grant.sandbox}" if grant.sandbox else ""
    if grant.scope == GrantScope.SESSION_PREFIX:
        return f"{grant.tool_id} {grant.head} (any such call{where})"
    return f"{grant.summary} (exactly this call{where})"


def check_revocation(ledger: GrantLedger, revocation: GrantRevocation) -> Grant:
    """The grant to revoke, or `GrantNotFound` (404) / `GrantAlreadyRevoked` (409)."""
    grant = next((g for g in ledger.grants if g.grant_id == revocation.grant_id), None)
    if grant is None:
        known = ", ".join(g.grant_id for g in ledger.grants if g.revoked_at is None) or "none"
        raise ApplicationError(
            f"no grant {revocation.grant_id!r} here; grants in force: {known}",
            type=ErrorType.GRANT_NOT_FOUND,
            non_retryable=True,
        )
    if grant.revoked_at is not None:
        raise ApplicationError(
            f"grant {grant.grant_id!r} was already revoked by {grant.revoked_by} at "
            f"{grant.revoked_at:%Y-%m-%d %H:%M:%S} UTC",
            type=ErrorType.GRANT_ALREADY_REVOKED,
            non_retryable=True,
        )
    return grant


def revoke(ledger: GrantLedger, revocation: GrantRevocation) -> Grant:
    """Revoke a grant (validated by `check_revocation`); audited. Later calls are asked for again."""
    grant = check_revocation(ledger, revocation)
    grant.revoked_by = revocation.principal or Principal.ANONYMOUS
    grant.revoked_at = workflow.now()
    ledger.audit.append(
        AuditEntry(
            kind="revoked",
            at=grant.revoked_at,
            principal=grant.revoked_by,
            channel=revocation.channel,
            interaction_id=grant.interaction_id,
            comment=f"{grant.grant_id}: {describe(grant)}"
            + (f" — {revocation.reason}" if revocation.reason else ""),
        )
    )
    return grant
