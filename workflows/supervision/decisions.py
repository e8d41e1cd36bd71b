"""Taking decisions in: every door's `Decision` goes through `Decisions.take`, the one function.

`take` checks the decision (`checks.check`: the request, the role, the approvers, the two-person
rule, the policy floor, alike for every door) and applies it: a first approval under the
two-person rule is counted, anything else decided, recorded with who, where and when, audited,
published and shown on the chat's card; an approval may edit the call or make a grant
(`grants`). The doors:
- `decide_checked` (update; validated by `check` before history) answers once the decision's
  consequence is in place: the approved tool ran (`tool_finished`), a gate opened (`settle`), or
  the denial is recorded; its signal twin `decide` audits a refusal instead of raising it;
- `reply`: a chat message while a request waits, read by `chat_reply.to_decision`;
- `system`: the run's own denials (a timeout, a cancel, a withdrawn request); rules and grants
  (`standing`) decide calls asked of nobody.
A refusal is audited the same way whatever the door (`refused`): the API sends a refused update's
decision again by the signal twin, so that it is recorded too.

Determinism: state and `workflow.now()` decide everything here; no commands but the surface's.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, TypedDict, Unpack

from temporalio import workflow
from temporalio.exceptions import ApplicationError

with workflow.unsafe.imports_passed_through():
    from contracts import (
        PERSON_SOURCES,
        Answer,
        ApprovalCounted,
        AuditKind,
        Decision,
        DecisionSource,
        DecisionTaken,
        ErrorType,
        GrantScope,
        InboundMessage,
        InteractionOutcome,
        InteractionRequest,
        InteractionType,
        Principal,
        ReplyRefused,
        Said,
        SandboxProfile,
        ToolApprovalAsk,
        ToolResult,
        Verdict,
    )

    from .state import SupervisedState

from . import checks, metrics, two_people
from .audit import audit
from .chat_reply import to_decision
from .grants import Grants
from .ports import Surface
from .relayed import DecisionRelay

SYSTEM_CHANNEL = "system"


def approved_of(said: Said) -> bool:
    """Whether a decision says yes: an approval, or an answer."""
    return isinstance(said, Answer) or said.approved


def data_of(said: Said) -> dict[str, Any] | None:
    """What the outcome shows of a decision besides yes or no (`response_data`, as the seeds name it)."""
    if isinstance(said, Answer):
        return {"text": said.text}
    data = {"arguments": said.edit, "grant": said.grant, "sandbox": said.sandbox}
    return {
        key: str(value) if key != "arguments" else value for key, value in data.items() if value is not None
    } or None


SHOWN_OF_AN_OUTCOME = {"interaction_id", "approved", "decided_by", "channel", "comment", "grant_id"}
"""What the stream's `DecisionTaken` shows of a decision's outcome, as the outcome names it."""


class Taken(TypedDict, total=False):
    """Where a decision came from, as the stream's `DecisionTaken` says it besides its outcome."""

    message_id: str | None
    """The chat message that took it."""
    workflow_id: str | None
    """The workflow that asked, when it is not the one publishing (a session relays its graph's)."""
    rule_id: str | None
    """The rule that took it."""


def taken(outcome: InteractionOutcome, **where: Unpack[Taken]) -> DecisionTaken:
    """The stream's event of a decision."""
    facts = outcome.model_dump(include=SHOWN_OF_AN_OUTCOME)
    return DecisionTaken(**facts, said=said_of(outcome), **where)


def said_of(outcome: InteractionOutcome) -> Said:
    """What a decision said, typed, read back from its outcome's `response_data` (`data_of`'s
    inverse; the one place that reads its keys)."""
    data = outcome.response_data or {}
    text = data.get("text")
    if outcome.approved and isinstance(text, str) and text:
        return Answer(text=text)
    edit = data.get("arguments")
    grant, sandbox = data.get("grant"), data.get("sandbox")
    return Verdict(
        approved=outcome.approved,
        edit=edit if isinstance(edit, dict) else None,
        grant=GrantScope(grant) if grant in set(GrantScope) else None,
        sandbox=SandboxProfile(sandbox) if sandbox in set(SandboxProfile) else None,
    )


Elsewhere = Callable[[str], str | None]
"""The workflow that asked a request this run only shows (a session's graph), by interaction id."""


class Decisions:
    """The decisions of one supervised run, on its state."""

    def __init__(self, state: SupervisedState, surface: Surface, grants: Grants) -> None:
        self._state = state
        self._surface = surface
        self._grants = grants
        self._settled: set[str] = set()
        self._shown: dict[str, InteractionRequest] = {r.interaction_id: r for r in state.pending}
        """Requests shown on the chat (their card shows the decision), by id."""
        self.elsewhere: Elsewhere = lambda _interaction_id: None
        """Set by a session and a graph: which workflow asked a request they only show."""
        self.relay: DecisionRelay | None = None
        """Set with `elsewhere`: passes a signalled decision on to the workflow that asked."""

    def shown(self, request: InteractionRequest) -> None:
        """A request was opened and shown: its decision is shown the same way."""
        self._shown[request.interaction_id] = request

    # ------------------------------------------------------------------ doors

    def check(self, decision: Decision) -> None:
        """Validator of `decide_checked`: the one check (`checks.check`), before history."""
        self._check(decision)

    async def decide_checked(self, decision: Decision) -> InteractionOutcome:
        """Take the decision; answer once the approved tool ran (or the denial is recorded)."""
        outcome = self.take(decision)  # checked again: a racing twin may have decided it
        if not outcome.complete:  # the two-person rule: counted, not decided
            return outcome
        await workflow.wait_condition(
            lambda: outcome.interaction_id in self._settled or self._state.cancelled
        )
        return self._state.decided[outcome.interaction_id]

    def decide(self, decision: Decision) -> None:
        """Take a signalled decision: a refusal is audited, not raised; a decision on a request another
        workflow asked is passed on there. A decision a door was refused (`refused`) is only recorded,
        never taken."""
        try:
            if decision.refused is None:
                self.take(decision)
                return
            self._check(decision)
            self.refused(decision, decision.refused)  # it would pass now: still only the refusal it had
        except ApplicationError as err:
            owner = self.elsewhere(decision.interaction_id)
            if err.type == ErrorType.INTERACTION_RELAYED and owner is not None and self.relay is not None:
                self.relay.forward(owner, decision)
                return
            self.refused(decision, err.message)

    def reply(self, message: InboundMessage, request: InteractionRequest) -> bool:
        """A chat message while `request` waits: its decision (`chat_reply.to_decision`), taken here,
        or, for a request another workflow asked (a session's graph), checked here as that workflow
        will check it and passed on (`relay`). A refusal is audited and told to the chat. Whether the
        decision was taken or passed on."""
        decision = to_decision(message, request)
        try:
            if self.relay is not None and self.elsewhere(request.interaction_id) == request.workflow_id:
                checks.check_person(request, decision)
                self.relay.forward(request.workflow_id, decision)
            else:
                self.take(decision)
        except ApplicationError as err:
            self.refused(decision, err.message)
            self.refuse_reply(request.interaction_id, message, err.message)
            return False
        return True

    def system(
        self, interaction_id: str, principal: str, comment: str | None, *, timeout: bool = False
    ) -> None:
        """The run's own denial of a pending request: it timed out, the run was cancelled, or the
        request was withdrawn (its task was rolled back)."""
        self.take(
            Decision(
                interaction_id=interaction_id,
                principal=principal,
                channel=SYSTEM_CHANNEL,
                source=DecisionSource.TIMEOUT if timeout else DecisionSource.SYSTEM,
                said=Verdict(approved=False),
                comment=comment,
            )
        )

    # ------------------------------------------------------------------ the one function

    def take(self, decision: Decision) -> InteractionOutcome:
        """Check the decision and apply it: counted (the two-person rule), or decided with its edit
        and grant. Raises the check's typed refusal (nothing is changed then)."""
        request = self._check(decision)
        if request is None:
            return self._standing(decision)
        said = decision.said
        if isinstance(said, Verdict) and said.approved and two_people.needs_more(request):
            return self._count(request, decision)
        approved_by = list(request.approved_by)
        outcome = self._decide(request, decision)
        if outcome.approved and decision.source in PERSON_SOURCES:
            outcome.approvals = [*approved_by, decision.principal]
        if isinstance(said, Verdict) and said.approved and said.edit is not None:
            proposed = request.ask.arguments if isinstance(request.ask, ToolApprovalAsk) else None
            self._audit_outcome(
                AuditKind.EDITED,
                outcome,
                f"proposed {json.dumps(proposed, sort_keys=True, default=str)}; "
                f"runs {json.dumps(said.edit, sort_keys=True, default=str)}",
            )
        if isinstance(said, Verdict) and said.approved and said.grant is not None:
            self._grants.record(request, outcome, said.grant)
        return outcome

    def _check(self, decision: Decision) -> InteractionRequest | None:
        try:
            return checks.check(self._state, decision)
        except ApplicationError as err:
            owner = self.elsewhere(decision.interaction_id)
            if err.type != ErrorType.INTERACTION_NOT_FOUND or owner is None:
                raise
            raise ApplicationError(
                f"interaction {decision.interaction_id!r} is asked by {owner}; its decision goes there",
                owner,
                type=ErrorType.INTERACTION_RELAYED,
                non_retryable=True,
            ) from None

    # ------------------------------------------------------------------ applying

    def _count(self, request: InteractionRequest, decision: Decision) -> InteractionOutcome:
        """A first approval of a two-person request: counted, audited, shown as 1/2 everywhere; the
        (incomplete) outcome the approver is answered."""
        principal, channel = decision.principal, decision.channel
        request.approved_by.append(principal)
        now = workflow.now()
        so_far = f"{len(request.approved_by)}/{request.approvals_required}"
        audit(
            self._state.audit,
            AuditKind.APPROVAL_COUNTED,
            principal,
            channel=channel,
            interaction_id=request.interaction_id,
            comment=f"{so_far} approvals: waiting for another approver",
            at=now,
        )
        outcome = InteractionOutcome(
            interaction_id=request.interaction_id,
            approved=True,
            decided_by=principal,
            channel=channel,
            decided_at=now,
            comment=f"{so_far} approvals: another, different approver must approve too",
            approvals=list(request.approved_by),
            complete=False,
        )
        metrics.decided(request, outcome)
        self._surface.publish(
            ApprovalCounted(
                interaction_id=request.interaction_id,
                approved_by=list(request.approved_by),
                approvals_required=request.approvals_required,
                message_id=_message_id(decision),
            )
        )
        self._surface.channel.decided(request.model_copy(deep=True), outcome)
        self._surface.refresh()
        return outcome

    def _decide(self, request: InteractionRequest, decision: Decision) -> InteractionOutcome:
        """Move a pending request to decided: audited (a question: answered or declined), published
        and shown; a denial is settled at once. A chat message's decision says so on its chunk (an
        HTTP sender waiting for its turn finds it)."""
        state = self._state
        interaction_id = request.interaction_id
        question = request.interaction_type == InteractionType.USER_INPUT
        state.pending[:] = [r for r in state.pending if r.interaction_id != interaction_id]
        approved = approved_of(decision.said)
        outcome = InteractionOutcome(
            interaction_id=interaction_id,
            approved=approved,
            decided_by=decision.principal,
            channel=decision.channel,
            decided_at=workflow.now(),
            comment=decision.comment,
            response_data=data_of(decision.said),
        )
        state.decided[interaction_id] = outcome
        metrics.decided(request, outcome)
        yes, no = (
            (AuditKind.ANSWERED, AuditKind.DECLINED) if question else (AuditKind.APPROVED, AuditKind.DENIED)
        )
        self._audit_outcome(yes if approved else no, outcome, decision.comment)
        if not approved:
            self._settled.add(interaction_id)
            self._card_decided(interaction_id, outcome)
        state.last_activity = outcome.decided_at
        self._surface.publish(taken(outcome, message_id=_message_id(decision)))
        self._surface.refresh()
        return outcome

    def _standing(self, decision: Decision) -> InteractionOutcome:
        """A call a rule or a grant decided as it was proposed (its own interaction id: the run's
        exactly-once claim), audited as decided by the rule or the grant's approver, and shown."""
        state = self._state
        said = decision.said
        approved = approved_of(said)
        rule = decision.source == DecisionSource.RULE
        standing: dict[str, Any] = {
            key: decision.metadata[key] for key in ("rule_id", "grant_id") if key in decision.metadata
        }
        outcome = InteractionOutcome(
            interaction_id=decision.interaction_id,
            approved=approved,
            decided_by=decision.principal,
            channel=decision.channel,
            decided_at=workflow.now(),
            comment=decision.comment,
            grant_id=None if rule else standing.get("grant_id"),
            response_data=data_of(said) if not rule else None,
        )
        state.decided[decision.interaction_id] = outcome
        kind = (AuditKind.RULE_ALLOWED if approved else AuditKind.RULE_DENIED) if rule else AuditKind.ALLOWED
        self._audit_outcome(kind, outcome, decision.comment)
        self._surface.publish(taken(outcome, rule_id=standing.get("rule_id")))
        return outcome

    # ------------------------------------------------------------------ refusals

    def refused(self, decision: Decision, reason: str) -> None:
        """Audit a decision that was refused (a signal or a chat reply cannot answer with an error)."""
        self._audit_refusal(decision.principal, decision.channel, decision.interaction_id, reason)

    def _audit_refusal(
        self, principal: str | None, channel: str, interaction_id: str | None, reason: str
    ) -> None:
        audit(
            self._state.audit,
            AuditKind.REJECTED,
            principal or Principal.ANONYMOUS,
            channel=channel,
            interaction_id=interaction_id,
            comment=reason,
        )

    def refuse_reply(self, interaction_id: str, message: InboundMessage, reason: str) -> None:
        """Tell the chat and the stream why a reply did not decide `interaction_id`."""
        refused = ReplyRefused(interaction_id=interaction_id, reason=reason, message_id=message.message_id)
        self._surface.channel.tell(refused)
        self._surface.publish(refused)

    # ------------------------------------------------------------------ consequences

    def settle(self, interaction_id: str) -> None:
        """The decision's consequence is in place (a gate opened): answer the waiting update."""
        self._settled.add(interaction_id)

    def tool_finished(self, interaction_id: str | None, result: ToolResult) -> None:
        """Attach an approved run's result to its decision, show it, and answer the waiting update."""
        if interaction_id is None:
            return
        outcome = self._state.decided.get(interaction_id)
        if outcome is not None:
            outcome.tool_result = result
            self._card_decided(interaction_id, outcome)
        self._settled.add(interaction_id)

    def _audit_outcome(self, kind: AuditKind, outcome: InteractionOutcome, comment: str | None) -> None:
        audit(
            self._state.audit,
            kind,
            outcome.decided_by,
            channel=outcome.channel,
            interaction_id=outcome.interaction_id,
            comment=comment,
            at=outcome.decided_at,
        )

    def _card_decided(self, interaction_id: str, outcome: InteractionOutcome) -> None:
        request = self._shown.pop(interaction_id, None)
        if request is not None:
            self._surface.channel.decided(request, outcome)


def _message_id(decision: Decision) -> str | None:
    """The chat message a decision came from (a reply), if any."""
    message_id = decision.metadata.get("message_id")
    return message_id if isinstance(message_id, str) and message_id else None
