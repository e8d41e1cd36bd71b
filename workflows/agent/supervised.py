"""The agent loop's host, on supervision: `SupervisedHost` is the one `LoopHost`.

It asks for approvals (an approval rule or a grant in force decides a call at once, audited; else
a TOOL_APPROVAL request, with the two-person rule and escalation the decision policy names) and questions
(USER_INPUT), holds the loop while the run is paused, hands an approved run's result to its
decision, and says where worker-bound tools keep their state and which sandbox the session or
its agent chose. A session and a graph task's run each wrap their `Supervisor` in one.
"""

from __future__ import annotations

from typing import Any

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from contracts import (
        Answer,
        Elicitation,
        ElicitationAnswer,
        GrantScope,
        InteractionOutcome,
        Principal,
        QuestionAsk,
        QuestionAsked,
        RuleContext,
        RuleDecision,
        SandboxProfile,
        ToolApprovalAsk,
        ToolAssessment,
        ToolCallRequest,
        ToolResult,
        policy_for,
    )

    from .state import AgentRunState

from ..supervision import sandbox
from ..supervision.decisions import said_of
from ..supervision.rules import not_here
from ..supervision.supervisor import Supervisor

ELICITATIONS_KEPT = 50
"""Answers to MCP elicitations kept for their tools to read (each is read within seconds)."""


class SupervisedHost:
    """The agent loop's host for one supervised run."""

    def __init__(self, supervisor: Supervisor, state: AgentRunState) -> None:
        self._supervisor = supervisor
        self._state = state
        self.publish = supervisor.publish

    @property
    def owner_id(self) -> str:
        """Workflow id of the supervised run."""
        return self._supervisor.owner_id

    @property
    def rules(self) -> RuleContext | None:
        """The run's project, person and profile, for approval rules (None: only global rules)."""
        return self._supervisor.policy.rules

    @property
    def sandbox(self) -> SandboxProfile | None:
        """The sandbox the session or its agent chose for approved calls (None: the tool's default)."""
        return self._supervisor.policy.sandbox

    @property
    def tool_states(self) -> dict[str, dict[str, Any]]:
        """What each worker-bound tool's last result said of its state (carried across runs)."""
        return self._state.tool_states

    @property
    def worker_queues(self) -> dict[str, str]:
        """Where each worker-bound tool's state is (carried across runs with the state)."""
        return self._state.worker_queues

    @property
    def asked(self) -> int:
        """Requests opened so far (approvals, questions): a count that only grows."""
        return self._state.next_interaction

    async def ask_approval(
        self, call: ToolCallRequest, assessment: ToolAssessment, *, edit_of: InteractionOutcome | None = None
    ) -> InteractionOutcome:
        """Open an approval request and wait for a decision, a cancel, or the timeout.

        An approval rule that denies the call refuses it at once; else a grant in force that matches
        the call allows it, and then a rule that allows it (each audited as deciding) where its maker
        could have approved the call alone (`rules.not_here`; else the request says why the rule did
        not decide); a rule that asks is shown on the request.
        `edit_of`: the approval whose edit made this call (asked again: its kind changed).
        """
        supervisor = self._supervisor
        take = supervisor.decisions.take
        rule = assessment.rule
        if rule is not None and rule.decision == RuleDecision.DENY:
            return take(supervisor.rules.deciding(rule, assessment))
        grant = supervisor.grants.matching(call, assessment)
        if grant is not None:
            return take(supervisor.grants.allowing(grant, assessment))
        decision = policy_for(call.tool_id, *supervisor.policy.layers)
        required = 2 if assessment.critical else decision.approvals_required
        approvers = (
            decision.approvers
            if decision.approvers is not None
            else supervisor.policy.approvers_for(supervisor.requests.requester)
        )
        why_asked = (
            not_here(rule, approvers, required)
            if rule is not None and rule.decision == RuleDecision.ALLOW
            else None
        )
        if rule is not None and rule.decision == RuleDecision.ALLOW and why_asked is None:
            return take(supervisor.rules.deciding(rule, assessment))
        grants = (
            [GrantScope(g) for g in assessment.grants if g in set(GrantScope)]
            if decision.allow_grants
            else []
        )
        ask = ToolApprovalAsk(
            tool=call.tool_id,
            arguments=call.arguments,
            summary=assessment.summary,
            grants=grants,
            sandboxes=[SandboxProfile(profile) for profile in sandbox.offered(assessment)],
            sandbox=assessment.sandbox,
            description=assessment.description,
            reason=f"{assessment.reason}; {why_asked}" if why_asked else assessment.reason,
            head=assessment.head,
            context=assessment.context,
            rule=rule,
        )
        if edit_of is not None:
            ask.edit_of = edit_of.interaction_id
            ask.reason = (
                f"{edit_of.decided_by} edited the call approved as {edit_of.interaction_id} into another kind: "
                f"{assessment.reason}"
            )
        return await supervisor.requests.ask(
            "tool",
            ask,
            approvers=decision.approvers,
            approvals_required=required,
            escalate_to=decision.escalate_to,
            escalate_after_seconds=decision.escalate_after_seconds,
        )

    async def ask_user(self, call: ToolCallRequest) -> InteractionOutcome:
        """The agent's question (`ask_user`): a USER_INPUT request, answered with `response_data.text`.

        Who may answer: the approvers, and the person whose message led to it; anyone when the
        session names no approvers. It waits `question_timeout_seconds`.
        """
        question = str(call.arguments.get("question", "")).strip()
        return await self._question(
            QuestionAsk(question=question, tool=call.tool_id),
            self._supervisor.policy.question_timeout_seconds,
        )

    async def elicit(self, asked: Elicitation) -> ElicitationAnswer:
        """A running MCP tool's server asks the person something: a USER_INPUT request like the
        agent's questions (`response_data.text` answers it), waiting at most `asked.timeout_seconds`."""
        outcome = await self._question(
            QuestionAsk(
                question=asked.message,
                tool=asked.tool_id,
                elicitation_id=asked.elicitation_id,
                requested_schema=asked.requested_schema,
            ),
            asked.timeout_seconds,
        )
        self._supervisor.decisions.settle(outcome.interaction_id)  # the answer is in place
        if outcome.approved:
            said = said_of(outcome)
            text = said.text if isinstance(said, Answer) else None
            answer = ElicitationAnswer(action="accept", text=text, decided_by=outcome.decided_by)
        else:
            gone = outcome.decided_by in (Principal.TIMEOUT, Principal.CANCEL)
            answer = ElicitationAnswer(action="cancel" if gone else "decline", decided_by=outcome.decided_by)
        kept = self._state.elicitations
        kept[asked.elicitation_id] = answer
        for old in list(kept)[:-ELICITATIONS_KEPT]:
            del kept[old]
        return answer

    def elicitation(self, elicitation_id: str) -> ElicitationAnswer | None:
        """The answer to an elicitation, once there is one."""
        return self._state.elicitations.get(elicitation_id)

    async def _question(self, ask: QuestionAsk, timeout_seconds: int | None) -> InteractionOutcome:
        requests = self._supervisor.requests
        answerers = self._supervisor.policy.approvers_for(requests.requester)
        if answerers and requests.requester and requests.requester not in answerers:
            answerers.insert(0, requests.requester)
        return await requests.ask(
            "input",
            ask,
            approvers=answerers,
            timeout_seconds=timeout_seconds,
            announce=QuestionAsked,
        )

    async def checkpoint(self) -> bool:
        """Hold while paused; report whether the work may go on."""
        await workflow.wait_condition(lambda: not self._state.paused or self._state.cancelled)
        return not self._state.cancelled

    def tool_finished(self, interaction_id: str | None, result: ToolResult) -> None:
        """Attach an approved run's result to its decision and release waiting updates."""
        self._supervisor.decisions.tool_finished(interaction_id, result)
