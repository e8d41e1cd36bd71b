"""What a decision may say: the checks of a response to a pending request.

`check_response` is the validator of `respond_checked` (and the guard of its signal twin and of
chat replies): an unknown or already decided interaction, a principal who may not decide it, the
same person approving twice under the two-person rule, or `response_data` that does not fit the
request are refused with a typed `ApplicationError` before anything reaches history. Pure.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from temporalio import workflow
from temporalio.exceptions import ApplicationError

with workflow.unsafe.imports_passed_through():
    from contracts import (
        ErrorType,
        InteractionRequest,
        InteractionResponse,
        InteractionType,
        Principal,
    )

    from .state import SupervisedState

from .two_people import check_second_approver, person


def _when(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%d %H:%M:%S UTC")


def find_pending(ledger: SupervisedState, interaction_id: str) -> InteractionRequest | None:
    """The pending interaction with this id, if any."""
    return next((r for r in ledger.pending if r.interaction_id == interaction_id), None)


def may_decide(request: InteractionRequest, principal: str) -> bool:
    """Whether `principal` is allowed to answer `request` (empty approvers: anyone)."""
    return not request.approvers or person(principal) in {person(p) for p in request.approvers}


def check_response(ledger: SupervisedState, response: InteractionResponse) -> InteractionRequest:
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
