"""The tool gate: assess a call, have it approved when it needs a person (edits re-assessed and,
when of another kind, asked for again), run it, and give the agent its result or the denial.
An `ask_user` call is a question instead (`questions`)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from contracts import (
        ASK_USER,
        AgentResult,
        AssessRequest,
        RuleContext,
        RuleDecision,
        StepAssessment,
        ToolAssessment,
        ToolCalled,
        ToolCallRequest,
        ToolRefused,
        ToolRestarted,
        ToolResult,
        ToolRun,
        ToolUsed,
        UniversalMessage,
        Verdict,
    )
    from contracts.names import ASSESS_TOOL_CALL

from ..supervision import sandbox
from ..supervision.decisions import said_of
from .host import LoopHost
from .options import ASSESS_RETRY, ASSESS_TIMEOUT
from .questions import ask_question
from .replies import denial, result_told, tool_message
from .routing import LOST, remember_worker, run_or_lost


async def assess(
    call: ToolCallRequest, state: dict[str, Any], rules: RuleContext | None = None
) -> ToolAssessment:
    """Assess the call, knowing where its tool's state is (`state`) and which approval rules apply
    (`rules`)."""
    assessment: ToolAssessment = await workflow.execute_local_activity(
        ASSESS_TOOL_CALL,
        AssessRequest(call=call, state=state, rules=rules),
        result_type=ToolAssessment,
        start_to_close_timeout=ASSESS_TIMEOUT,
        retry_policy=ASSESS_RETRY,
        summary=f"assess {call.tool_id}",
    )
    return assessment


def refuse_unknown(
    host: LoopHost, call: ToolCallRequest, assessment: ToolAssessment, messages: list[UniversalMessage]
) -> None:
    result = ToolResult(tool_id=call.tool_id, ok=False, error=assessment.reason)
    host.publish(ToolRefused(tool_name=call.tool_id, error=assessment.reason))
    messages.append(tool_message(call, result_told(result), None))


def _tool_state(host: LoopHost, tool_id: str) -> dict[str, Any]:
    """The metadata of the tool's last result (where it left its state), while the worker holding
    that state still does; empty for every other tool. Kept in the state, not read from the
    conversation (older messages are let go)."""
    if not host.worker_queues.get(tool_id):
        return {}
    return host.tool_states.get(tool_id, {})


@dataclass(frozen=True)
class Assessed:
    """A call's assessment made by the quick step that proposed it, and what it was made from."""

    assessment: ToolAssessment
    given: StepAssessment

    @staticmethod
    def of(result: AgentResult, given: StepAssessment | None) -> Assessed | None:
        """The step's assessment, when it was asked for one (`given`) and made it."""
        return Assessed(result.assessment, given) if result.assessment and given else None

    def stands_for(self, call: ToolCallRequest, state: dict[str, Any], host: LoopHost) -> bool:
        """Whether it is the assessment the gate would make of `call` now: of its tool, from the
        state and the rule context the gate has."""
        return (
            self.assessment.tool_id == call.tool_id
            and self.given.states.get(call.tool_id, {}) == state
            and self.given.rules == host.rules
        )


def step_assessment(host: LoopHost) -> StepAssessment:
    """What a quick step needs to assess its call as `gate_and_run` would: every stateful tool's
    state (`_tool_state`) and the rule context."""
    states = {tool_id: _tool_state(host, tool_id) for tool_id in host.worker_queues}
    return StepAssessment(states={k: v for k, v in states.items() if v}, rules=host.rules)


async def gate_and_run(
    host: LoopHost,
    call: ToolCallRequest,
    messages: list[UniversalMessage],
    *,
    assessed: Assessed | None = None,
) -> None:
    """Assess one call, get it approved when needed, run it, and append its result or denial.

    `assessed`: the call's assessment made by the quick step that proposed it in this workflow
    task (`step_assessment`); when it was made from the state and rule context the gate has now
    (`Assessed.stands_for`), it stands for the `assess_tool_call` local activity. Everything after
    the assessment is the same either way.

    An `ask_user` call is a question to the person instead. An approval may edit the call's
    arguments: the edited call is assessed again and, when it is of another kind (another
    command head or reason), asked for again; the agent is told its call was edited.
    """
    if call.tool_id == ASK_USER:
        await ask_question(host, call, messages)
        return
    state = _tool_state(host, call.tool_id)
    if assessed is not None and assessed.stands_for(call, state, host):
        assessment = assessed.assessment
    else:
        assessment = await assess(call, state, host.rules)
    if not assessment.known:
        refuse_unknown(host, call, assessment, messages)
        return
    interaction_id: str | None = None
    edit: dict[str, Any] | None = None
    if assessment.needs_approval:
        assessment = sandbox.proposed(assessment, host.sandbox)
        outcome = await host.ask_approval(call, assessment)
        if not outcome.approved:
            messages.append(tool_message(call, denial(outcome).content(), outcome.interaction_id))
            return
        said = said_of(outcome)
        edited = said.edit if isinstance(said, Verdict) else None
        if edited is not None and edited != call.arguments:
            edit = {"edited_by": outcome.decided_by, "original_arguments": call.arguments}
            call = call.model_copy(update={"arguments": edited})
            again = sandbox.proposed(await assess(call, state, host.rules), host.sandbox)
            if not again.known:
                refuse_unknown(host, call, again, messages)
                return
            refused = again.rule is not None and again.rule.decision == RuleDecision.DENY
            if refused or (
                again.needs_approval and (again.head, again.reason) != (assessment.head, assessment.reason)
            ):
                not_yet = (
                    f"not run: an approval rule refuses the edited call ({again.rule.description})"
                    if refused and again.rule is not None
                    else f"not run yet: the edited call is of another kind ({again.reason}), so it is asked for again"
                )
                host.tool_finished(
                    outcome.interaction_id, ToolResult(tool_id=call.tool_id, ok=False, error=not_yet)
                )
                outcome = await host.ask_approval(call, again, edit_of=outcome)  # a rule that denies: at once
                if not outcome.approved:
                    messages.append(
                        tool_message(
                            call,
                            denial(outcome).model_copy(update={"edited": edit}).content(),
                            outcome.interaction_id,
                        )
                    )
                    return
            assessment = again
        assessment = sandbox.decided(assessment, outcome)
        interaction_id = outcome.interaction_id
        if not await host.checkpoint():
            host.tool_finished(interaction_id, ToolResult(tool_id=call.tool_id, ok=False, error="cancelled"))
            return
    host.publish(
        ToolCalled(
            tool_name=call.tool_id,
            tool_params=call.arguments,
            summary=assessment.summary,
            context=assessment.context,
            interaction_id=interaction_id,
            requires_approval=assessment.needs_approval,
        )
    )
    binding = assessment.worker_bound
    queue = host.worker_queues.get(call.tool_id) if binding is not None else None
    if queue == LOST:
        host.publish(ToolRestarted(tool_name=call.tool_id, interaction_id=interaction_id))
    chosen = assessment.sandbox if interaction_id is not None else None
    run = ToolRun(owner_id=host.owner_id, interaction_id=interaction_id, call=call, sandbox=chosen)
    try:
        result = await run_or_lost(run, assessment, queue)
    except asyncio.CancelledError:
        if interaction_id is not None:
            cancelled = ToolResult(tool_id=call.tool_id, ok=False, error="cancelled while it ran")
            host.tool_finished(interaction_id, cancelled)  # the approver is answered, not left waiting
        raise
    if binding is not None:
        remember_worker(host, call.tool_id, result)
    host.publish(ToolUsed(tool_name=call.tool_id, result=result.model_copy(), interaction_id=interaction_id))
    host.tool_finished(interaction_id, result)
    told = result_told(result) | ({"edited": edit} if edit else {})
    messages.append(tool_message(call, told, interaction_id))
