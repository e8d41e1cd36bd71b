"""The two-person rule: a request that needs two approvals counts the first and decides on the
second, from another person. Principals compare as given: every principal a contract holds is a
`PersonId` (`contracts.principals`), one spelling per person in any model the workflow builds or
reads from its history, so no channel's spelling is known here."""

from __future__ import annotations

from temporalio import workflow
from temporalio.exceptions import ApplicationError

with workflow.unsafe.imports_passed_through():
    from contracts import ErrorType, InteractionRequest


def already_approved(request: InteractionRequest, principal: str) -> bool:
    """Whether this person's approval was already counted."""
    return principal in request.approved_by


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
