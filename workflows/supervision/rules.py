"""Calls an approval rule decides: allowed without asking, or refused.

The worker's assessment names the rule that decides a call (`ToolAssessment.rule`); an `ask` rule
only makes a person be asked (the request shows it). `allow` and `deny` are `Decision`s of their own
interaction id (an allowed run's exactly-once claim), by `rule:<id>` on channel `rule`, taken by
`Decisions.take` like any other (audited with the rule as it read then, and shown).
Deterministic: no I/O, no time.
"""

from __future__ import annotations

import json

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from contracts import (
        Decision,
        DecisionSource,
        RuleDecision,
        RuleScope,
        RuleVerdict,
        ToolAssessment,
        Verdict,
    )

    from .state import SupervisedState

RULE_CHANNEL = "rule"


def rule_principal(rule: RuleVerdict) -> str:
    """Who decided, in the audit and the outcome: `rule:<id>`."""
    return f"rule:{rule.rule_id}"


class RuleOutcomes:
    """The rules' decisions in one supervised run."""

    def __init__(self, state: SupervisedState, *, prefix: str = "") -> None:
        self._state = state
        self._prefix = prefix

    def deciding(self, rule: RuleVerdict, assessment: ToolAssessment) -> Decision:
        """The decision by which `rule` allows or denies a call without asking (its own interaction
        id: an allowed run's claim); the audit keeps the rule as it read when it decided."""
        state = self._state
        interaction_id = f"{self._prefix}tool_{state.next_interaction}"
        state.next_interaction += 1
        approved = rule.decision == RuleDecision.ALLOW
        said = f"{'allowed' if approved else 'denied'} by rule {rule.rule_id} ({described(rule)})"
        return Decision(
            interaction_id=interaction_id,
            principal=rule_principal(rule),
            channel=RULE_CHANNEL,
            source=DecisionSource.RULE,
            said=Verdict(approved=approved),
            comment=f"{said}: {assessment.summary}" + (f" — {rule.reason}" if rule.reason else ""),
            metadata={"rule_id": rule.rule_id},
        )


def not_here(rule: RuleVerdict, approvers: list[str], approvals_required: int) -> str | None:
    """Why an `allow` rule may not decide this call without asking (None: it may). A rule does no
    more than its maker could: under the two-person rule nobody alone may approve, and where the
    call names its approvers the rule's maker must be one of them."""
    if approvals_required > 1:
        return f"rule {rule.rule_id} allows no call that needs {approvals_required} approvers"
    if approvers and rule.created_by not in approvers:
        return (
            f"rule {rule.rule_id} was made by {rule.created_by or 'nobody named'}, who is not among this "
            f"call's approvers ({', '.join(approvers)})"
        )
    return None


def described(rule: RuleVerdict) -> str:
    """The rule as it read when it decided: its words, what it matched, where it applied, who made
    it (kept in the audit, whatever later happens to the rule)."""
    place = {
        RuleScope.PROJECT: f"in project {rule.project}",
        RuleScope.USER: f"for {rule.user}",
        RuleScope.GLOBAL: "everywhere",
    }[rule.scope]
    matched = rule.match.model_dump(exclude_none=True) if rule.match is not None else None
    parts = [
        rule.description,
        f"matching {json.dumps(matched, sort_keys=True)}" if matched else None,
        place,
        f"made by {rule.created_by}" if rule.created_by else None,
    ]
    return "; ".join(part for part in parts if part)
