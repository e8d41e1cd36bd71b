"""Grants: standing approvals a person gives while approving a call, matched, used and revoked.

An approval with `response_data.grant` (`session`: the same tool with the same arguments;
`session_prefix`: the same tool and command head, e.g. `DELETE orders`) records a `Grant` in
the supervised state; later calls it matches run without asking (`allow`), each audited as
allowed by it, until it is revoked. Every change is audited and shown on the stream.
Deterministic: time from `workflow.now()`, no I/O.
"""

from __future__ import annotations

from temporalio import workflow
from temporalio.exceptions import ApplicationError

with workflow.unsafe.imports_passed_through():
    from contracts import (
        AuditKind,
        Decision,
        DecisionSource,
        ErrorType,
        Grant,
        GrantMade,
        GrantRevocation,
        GrantRevoked,
        GrantScope,
        InteractionOutcome,
        InteractionRequest,
        Principal,
        SandboxProfile,
        ToolApprovalAsk,
        ToolAssessment,
        ToolCallRequest,
        Verdict,
    )
    from contracts.times import utc_text

    from .state import SupervisedState

from .audit import audit
from .ports import Surface
from .sandbox import granted


def describe(grant: Grant) -> str:
    """`sql DELETE orders (any statement)` or `sql: DELETE FROM orders WHERE id = 2 (exactly)`."""
    where = f", in sandbox {grant.sandbox}" if grant.sandbox else ""
    if grant.scope == GrantScope.SESSION_PREFIX:
        return f"{grant.tool_id} {grant.head} (any such call{where})"
    return f"{grant.summary} (exactly this call{where})"


class Grants:
    """The grants of one supervised run."""

    def __init__(self, state: SupervisedState, surface: Surface, *, prefix: str = "") -> None:
        self._state = state
        self._surface = surface
        self._prefix = prefix

    def matching(self, call: ToolCallRequest, assessment: ToolAssessment) -> Grant | None:
        """The grant in force that allows this call, if any (the oldest). A grant given for calls that
        run in a sandbox never allows one that cannot (input typed into a program at its prompt)."""
        for grant in self._state.grants:
            if grant.revoked_at is not None or grant.tool_id != call.tool_id:
                continue
            if grant.sandbox not in (None, SandboxProfile.FULL) and assessment.sandbox is None:
                continue
            if grant.scope == GrantScope.SESSION and grant.arguments == call.arguments:
                return grant
            if grant.scope == GrantScope.SESSION_PREFIX and assessment.head and grant.head == assessment.head:
                return grant
        return None

    def allowing(self, grant: Grant, assessment: ToolAssessment) -> Decision:
        """The decision by which a grant allows a call without asking (its own interaction id: the
        run's claim), in the grant's sandbox; `Decisions.take` records it as the grant's approver's."""
        state = self._state
        interaction_id = f"{self._prefix}tool_{state.next_interaction}"
        state.next_interaction += 1
        grant.uses += 1
        return Decision(
            interaction_id=interaction_id,
            principal=grant.granted_by,
            channel="grant",
            source=DecisionSource.GRANT,
            said=Verdict(approved=True, sandbox=grant.sandbox),
            comment=f"allowed by grant {grant.grant_id} of {grant.granted_by}: {assessment.summary}",
            metadata={"grant_id": grant.grant_id},
        )

    def record(self, request: InteractionRequest, outcome: InteractionOutcome, scope: GrantScope) -> Grant:
        """The grant an approval made (its response was checked), audited and shown."""
        state = self._state
        ask = request.ask
        assert isinstance(ask, ToolApprovalAsk), "checks.check lets only a tool approval grant"
        grant = Grant(
            grant_id=f"grant_{len(state.grants) + 1}",
            scope=GrantScope(scope),
            tool_id=ask.tool,
            arguments=ask.arguments if scope == GrantScope.SESSION else None,
            head=ask.head if scope == GrantScope.SESSION_PREFIX else None,
            summary=ask.summary,
            granted_by=outcome.decided_by,
            channel=outcome.channel,
            granted_at=outcome.decided_at,
            interaction_id=outcome.interaction_id,
            sandbox=granted(ask, outcome.response_data),
        )
        state.grants.append(grant)
        audit(
            state.audit,
            AuditKind.GRANTED,
            outcome.decided_by,
            channel=outcome.channel,
            interaction_id=outcome.interaction_id,
            comment=f"{grant.grant_id}: {describe(grant)} for the rest of the session",
            at=outcome.decided_at,
        )
        outcome.grant_id = grant.grant_id
        self._surface.publish(GrantMade(grant=grant.model_copy(), comment=describe(grant)))
        return grant

    def check_revocation(self, revocation: GrantRevocation) -> Grant:
        """The grant to revoke, or `GrantNotFound` (404) / `GrantAlreadyRevoked` (409)."""
        grants = self._state.grants
        grant = next((g for g in grants if g.grant_id == revocation.grant_id), None)
        if grant is None:
            known = ", ".join(g.grant_id for g in grants if g.revoked_at is None) or "none"
            raise ApplicationError(
                f"no grant {revocation.grant_id!r} here; grants in force: {known}",
                type=ErrorType.GRANT_NOT_FOUND,
                non_retryable=True,
            )
        if grant.revoked_at is not None:
            raise ApplicationError(
                f"grant {grant.grant_id!r} was already revoked by {grant.revoked_by} at "
                f"{utc_text(grant.revoked_at)}",
                type=ErrorType.GRANT_ALREADY_REVOKED,
                non_retryable=True,
            )
        return grant

    def revoke(self, revocation: GrantRevocation) -> Grant:
        """Revoke a grant (checked by `check_revocation`), audited and shown; later calls ask again."""
        grant = self.check_revocation(revocation)
        grant.revoked_by = by = revocation.principal or Principal.ANONYMOUS
        grant.revoked_at = workflow.now()
        audit(
            self._state.audit,
            AuditKind.REVOKED,
            grant.revoked_by,
            channel=revocation.channel,
            interaction_id=grant.interaction_id,
            comment=f"{grant.grant_id}: {describe(grant)}"
            + (f" — {revocation.reason}" if revocation.reason else ""),
            at=grant.revoked_at,
        )
        self._surface.publish(
            GrantRevoked(grant_id=grant.grant_id, revoked_by=by, channel=revocation.channel)
        )
        self._surface.refresh()
        return grant
