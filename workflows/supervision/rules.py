"""Calls an approval rule decided: allowed without asking, or refused, each audited and shown.

The worker's assessment names the rule that decides a call (`ToolAssessment.rule`); an `ask` rule
only makes a person be asked (the request shows it). `allow` and `deny` are outcomes of their own
interaction id (an allowed run's exactly-once claim), decided by `rule:<id>` on channel `rule`.
Deterministic: time from `workflow.now()`, no I/O.
"""

from __future__ import annotations

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from contracts import AuditKind, InteractionOutcome, RuleVerdict, TaskChunkType, ToolAssessment

    from .state import SupervisedState

from .audit import audit
from .ports import Surface

APPROVAL_RULES = "approval-rules"
"""Patch: a call an approval rule allows runs without asking, one it denies never runs."""
RULE_CHANNEL = "rule"


def rule_principal(rule: RuleVerdict) -> str:
    """Who decided, in the audit and the outcome: `rule:<id>`."""
    return f"rule:{rule.rule_id}"


class RuleOutcomes:
    """The rules' decisions in one supervised run."""

    def __init__(self, state: SupervisedState, surface: Surface, *, prefix: str = "") -> None:
        self._state = state
        self._surface = surface
        self._prefix = prefix

    def allow(self, rule: RuleVerdict, assessment: ToolAssessment) -> InteractionOutcome:
        """The call runs without asking, as the rule says."""
        return self._decide(rule, assessment, approved=True)

    def deny(self, rule: RuleVerdict, assessment: ToolAssessment) -> InteractionOutcome:
        """The call never runs, as the rule says."""
        return self._decide(rule, assessment, approved=False)

    def _decide(self, rule: RuleVerdict, assessment: ToolAssessment, *, approved: bool) -> InteractionOutcome:
        state = self._state
        interaction_id = f"{self._prefix}tool_{state.next_interaction}"
        state.next_interaction += 1
        said = f"{'allowed' if approved else 'denied'} by rule {rule.rule_id} ({rule.description})"
        comment = f"{said}: {assessment.summary}" + (f" — {rule.reason}" if rule.reason else "")
        outcome = InteractionOutcome(
            interaction_id=interaction_id,
            approved=approved,
            decided_by=rule_principal(rule),
            channel=RULE_CHANNEL,
            decided_at=workflow.now(),
            comment=comment,
        )
        state.decided[interaction_id] = outcome
        audit(
            state.audit,
            AuditKind.RULE_ALLOWED if approved else AuditKind.RULE_DENIED,
            rule_principal(rule),
            channel=RULE_CHANNEL,
            interaction_id=interaction_id,
            comment=comment,
            at=outcome.decided_at,
        )
        self._surface.publish(
            TaskChunkType.PROGRESS,
            {
                "interaction_id": interaction_id,
                "approved": approved,
                "decided_by": rule_principal(rule),
                "channel": RULE_CHANNEL,
                "rule_id": rule.rule_id,
                "comment": comment,
            },
            metadata={"interaction_id": interaction_id, "rule_id": rule.rule_id},
        )
        return outcome
