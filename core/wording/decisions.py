"""A decision in a sentence: `✓ tool_1 approved by bob (http)`, `✗ tool_2 denied by rule:r3 (rule): ...`."""

from __future__ import annotations

from contracts import Answer, ApprovalCounted, DecisionTaken, Principal, RequestEscalated


def decision_text(event: DecisionTaken) -> str:
    """Who decided what, where, and their words (a rule's or a grant's only when they refused)."""
    who, channel = event.decided_by, event.channel
    if channel == "grant":
        verb = f"allowed by grant {event.grant_id} of {who}"
    elif channel == "rule":
        verb = f"{'allowed' if event.approved else 'denied'} by {who}"
    elif isinstance(event.said, Answer):
        verb = f"answered by {who} ({channel}): {event.said.text}"
    else:
        verb = f"{'approved' if event.approved else 'denied'} by {who} ({channel})"
    text = f"{'✓' if event.approved else '✗'} {event.interaction_id} {verb}"
    if event.comment and (channel not in ("grant", "rule") or not event.approved):
        text += f": {event.comment}"
    return text


def timed_out(event: DecisionTaken) -> bool:
    """Nobody decided in time."""
    return event.decided_by == Principal.TIMEOUT


def counted_text(event: ApprovalCounted) -> str:
    """`… tool_1: 1/2 approvals`."""
    return f"… {event.interaction_id}: {len(event.approved_by)}/{event.approvals_required} approvals"


def escalated_text(event: RequestEscalated) -> str:
    """`… tool_1 escalated to carol, dave`."""
    return f"… {event.interaction_id} escalated to {', '.join(event.escalated_to)}"
