"""Who may answer a request for a person: the one rule behind `GET /sessions?waiting_for=` and
`synapse pending`."""

from __future__ import annotations

from contracts import InteractionRequest


def answerable_by(request: InteractionRequest, principal: str) -> bool:
    """Whether `principal` may answer `request`: anyone may when it names no approvers; else its
    approvers, and once it has escalated, those it escalated to."""
    if not request.approvers or principal in request.approvers:
        return True
    return request.escalated and principal in request.escalate_to
