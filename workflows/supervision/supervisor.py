"""The supervisor of one workflow run: the agent loop's host for approvals, and every decision.

`Supervisor` is the one `LoopHost` implementation (`ask_approval`, `checkpoint`, `tool_finished`)
and takes decisions from every channel: the validated update (`respond_checked`), its signal twin
(`respond`, whose refusals are audited) and a chat reply while a request waits (confirm/cancel keywords).
Every decision is audited, published, and shown on the chat's card. Sessions use it now; a
graph task can use it unchanged (it knows only the protocols in `ports`).

Determinism: state, `workflow.now()` and activity results decide everything here. The order of
what `ask_approval` does (status upsert, timer) is part of recorded histories: gate a change
behind `workflow.patched()`.
"""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any, TypedDict, Unpack

from temporalio import workflow
from temporalio.exceptions import ApplicationError

with workflow.unsafe.imports_passed_through():
    from contracts import (
        AuditEntry,
        Grant,
        GrantRevocation,
        InboundMessage,
        InteractionOutcome,
        InteractionRequest,
        InteractionResponse,
        InteractionType,
        Principal,
        SandboxProfile,
        TaskChunkType,
        ToolAssessment,
        ToolCallRequest,
        ToolResult,
        policy_for,
    )

from . import approvals, escalation, grants, sandbox
from .chat_reply import interpret_reply
from .ports import Policy, SupervisedState, Surface


class AskOptions(TypedDict, total=False):
    """How a request differs from the policy's defaults (`Supervisor.ask` / `open`)."""

    approvers: list[str] | None
    """Who may decide (a graph gate names its own); None: the policy's."""
    timeout_seconds: int | None
    """How long it waits; None: the policy's."""
    chunk: TaskChunkType
    """The chunk that announces it (default `tool_approval_request`)."""
    metadata: dict[str, Any] | None
    """Added to the request and its chunk (e.g. the graph task a gate holds)."""
    approvals_required: int
    """2: the two-person rule (default 1)."""
    escalate_to: list[str]
    """Asked too when nobody decided after `escalate_after_seconds` (default: half the timeout)."""
    escalate_after_seconds: int | None


class Supervisor:
    """Approvals and decisions of one workflow run, on its state."""

    def __init__(
        self, owner_id: str, state: SupervisedState, policy: Policy, surface: Surface, *, prefix: str = ""
    ) -> None:
        """Bind to the run's state (restored after continue-as-new) and its surface.

        `prefix` starts every interaction id (graph task runs: unique within their graph).
        """
        self._owner_id = owner_id
        self._prefix = prefix
        self._state = state
        self._policy = policy
        self._surface = surface
        self.publish = surface.publish
        self.requester: str | None = None
        """Who asked for the work now running (their requests name them; they may approve)."""
        self._settled: set[str] = set()
        self._requests: dict[str, InteractionRequest] = {r.interaction_id: r for r in state.pending}

    @property
    def ledger(self) -> SupervisedState:
        """The supervised state (pending, decided, audit, grants)."""
        return self._state

    # ------------------------------------------------------------ LoopHost

    @property
    def owner_id(self) -> str:
        """Workflow id of the supervised run."""
        return self._owner_id

    @property
    def sandbox(self) -> SandboxProfile | None:
        """The sandbox the session or its agent chose for approved calls (None: the tool's default)."""
        return self._policy.sandbox

    @property
    def tool_states(self) -> dict[str, dict[str, Any]]:
        """What each worker-bound tool's last result said of its state (carried across runs)."""
        return self._state.tool_states

    @property
    def worker_queues(self) -> dict[str, str]:
        """Where each worker-bound tool's state is (carried across runs with the state)."""
        return self._state.worker_queues

    async def ask_approval(
        self, call: ToolCallRequest, assessment: ToolAssessment, *, edit_of: InteractionOutcome | None = None
    ) -> InteractionOutcome:
        """Open an approval request and wait for a decision, a cancel, or the timeout.

        A grant in force that matches the call allows it at once (audited as allowed by it).
        `edit_of`: the approval whose edit made this call (asked again: its kind changed).
        """
        grant = grants.matching(self._state, call, assessment)
        if grant is not None:
            return self._allow_by_grant(grant, assessment)
        decision = policy_for(call.tool_id, *self._policy.layers)
        content: dict[str, Any] = {
            "tool_name": call.tool_id,
            "tool_params": call.arguments,
            "tool_description": assessment.description,
            "summary": assessment.summary,
            "reason": assessment.reason,
            "head": assessment.head,
            "grants": list(assessment.grants) if decision.allow_grants else [],
            **({"context": assessment.context} if assessment.context else {}),
            **({"sandboxes": offered} if (offered := sandbox.offered(assessment)) else {}),
        }
        if edit_of is not None:
            content["edit_of"] = edit_of.interaction_id
            content["reason"] = (
                f"{edit_of.decided_by} edited the call approved as {edit_of.interaction_id} into another kind: "
                f"{assessment.reason}"
            )
        return await self.ask(
            InteractionType.TOOL_APPROVAL,
            "tool",
            content,
            approvers=decision.approvers,
            approvals_required=2 if assessment.critical else decision.approvals_required,
            escalate_to=decision.escalate_to,
            escalate_after_seconds=decision.escalate_after_seconds,
        )

    async def ask_user(self, call: ToolCallRequest) -> InteractionOutcome:
        """The agent's question (`ask_user`): a USER_INPUT request, answered with `response_data.text`.

        Who may answer: the approvers, and the person whose message led to it; anyone when the
        session names no approvers. It waits `question_timeout_seconds`.
        """
        question = str(call.arguments.get("question", "")).strip()
        answerers = self._policy.approvers_for(self.requester)
        if answerers and self.requester and self.requester not in answerers:
            answerers.insert(0, self.requester)
        return await self.ask(
            InteractionType.USER_INPUT,
            "input",
            {"question": question, "tool_name": call.tool_id, "summary": f"question: {question}"},
            approvers=answerers,
            timeout_seconds=self._policy.question_timeout_seconds,
            chunk=TaskChunkType.USER_INPUT_REQUEST,
        )

    def _allow_by_grant(self, grant: Grant, assessment: ToolAssessment) -> InteractionOutcome:
        """Approve a call by a grant: an approved outcome of its own id (the run's claim), audited."""
        state = self._state
        interaction_id = f"{self._prefix}tool_{state.next_interaction}"
        state.next_interaction += 1
        grant.uses += 1
        comment = f"allowed by grant {grant.grant_id} of {grant.granted_by}: {assessment.summary}"
        outcome = InteractionOutcome(
            interaction_id=interaction_id,
            approved=True,
            decided_by=grant.granted_by,
            channel="grant",
            decided_at=workflow.now(),
            comment=comment,
            grant_id=grant.grant_id,
            response_data={"sandbox": str(grant.sandbox)} if grant.sandbox else None,
        )
        state.decided[interaction_id] = outcome
        state.audit.append(
            AuditEntry(
                kind="allowed",
                at=outcome.decided_at,
                principal=grant.granted_by,
                channel="grant",
                interaction_id=interaction_id,
                comment=comment,
            )
        )
        self.publish(
            TaskChunkType.PROGRESS,
            {
                "interaction_id": interaction_id,
                "approved": True,
                "decided_by": grant.granted_by,
                "channel": "grant",
                "grant_id": grant.grant_id,
                "comment": comment,
            },
            metadata={"interaction_id": interaction_id, "grant_id": grant.grant_id},
        )
        return outcome

    def revoke_grant(self, revocation: GrantRevocation) -> Grant:
        """Revoke a grant (validate first with `grants.check_revocation`); later calls ask again."""
        grant = grants.revoke(self._state, revocation)
        self.publish(
            TaskChunkType.PROGRESS,
            {"grant_id": grant.grant_id, "revoked_by": grant.revoked_by, "channel": revocation.channel},
            metadata={"grant_id": grant.grant_id},
        )
        self._surface.refresh()
        return grant

    async def ask(
        self, kind: InteractionType, stem: str, content: dict[str, Any], **options: Unpack[AskOptions]
    ) -> InteractionOutcome:
        """Ask people something (`<prefix><stem>_<n>`) and wait for a decision, a cancel, or the timeout."""
        return await self.wait_for(self.open(kind, stem, content, **options))

    def open(
        self, kind: InteractionType, stem: str, content: dict[str, Any], **options: Unpack[AskOptions]
    ) -> InteractionRequest:
        """Open a request (audited, published, shown) without waiting; `wait_for` waits for it."""
        state = self._state
        interaction_id = f"{self._prefix}{stem}_{state.next_interaction}"
        state.next_interaction += 1
        now = workflow.now()
        timeout = timedelta(seconds=options.get("timeout_seconds") or self._policy.timeout_seconds)
        metadata = options.get("metadata") or {}
        approvers = options.get("approvers")
        escalate_to = options.get("escalate_to") or []
        request = InteractionRequest(
            interaction_id=interaction_id,
            interaction_type=kind,
            task_id=self._owner_id,
            content=content,
            metadata={"channel": self._policy.channel, **metadata},
            timestamp=now,
            approvers=approvers if approvers is not None else self._policy.approvers_for(self.requester),
            requested_by=self.requester,
            expires_at=now + timeout,
            approvals_required=options.get("approvals_required", 1),
            escalate_to=list(escalate_to),
            escalate_at=now + escalation.escalate_at(timeout, options.get("escalate_after_seconds"))
            if escalate_to
            else None,
        )
        approvals.open_request(state, request)
        self._requests[interaction_id] = request
        self._surface.channel.approval_requested(request)
        self.publish(
            options.get("chunk", TaskChunkType.TOOL_APPROVAL_REQUEST),
            request.content,
            metadata=approvals.announced(request, **metadata),
        )
        self._surface.show_status("waiting_approval")
        return request

    async def wait_for(self, request: InteractionRequest) -> InteractionOutcome:
        """Wait for an open request's decision, a cancel, or its expiry (also after continue-as-new)."""
        state = self._state
        interaction_id = request.interaction_id
        expires_at = request.expires_at or workflow.now()
        if request.escalate_at is not None and not request.escalated and request.escalate_at < expires_at:
            try:
                await workflow.wait_condition(
                    lambda: interaction_id in state.decided or state.cancelled,
                    timeout=max(request.escalate_at - workflow.now(), timedelta(0)),
                )
            except TimeoutError:
                self._escalate(interaction_id)
        timeout = expires_at - workflow.now()
        try:
            if timeout > timedelta(0):
                await workflow.wait_condition(
                    lambda: interaction_id in state.decided or state.cancelled, timeout=timeout
                )
        except TimeoutError:
            pass
        if interaction_id not in state.decided:
            principal = Principal.CANCEL if state.cancelled else Principal.TIMEOUT
            waited = expires_at - request.timestamp
            comment = state.cancel_reason if state.cancelled else f"no decision within {waited}"
            self._decide(
                interaction_id, approved=False, principal=principal, channel="system", comment=comment
            )
        self._surface.show_status("paused" if state.paused else "active")
        return state.decided[interaction_id]

    def _escalate(self, interaction_id: str) -> None:
        request = approvals.find_pending(self._state, interaction_id)
        if request is None:
            return
        escalation.escalate(self._state, request)
        self.publish(
            TaskChunkType.PROGRESS,
            {
                "interaction_id": interaction_id,
                "escalated_to": request.escalate_to,
                "approvers": request.approvers,
            },
            metadata={"interaction_id": interaction_id, "escalated": True},
        )
        self._surface.channel.escalated(request)
        self._surface.refresh()

    def withdraw(self, interaction_id: str, principal: str, comment: str) -> None:
        """Close a pending request without a person (e.g. its task was rolled back): a denial."""
        if approvals.find_pending(self._state, interaction_id) is not None:
            self._decide(
                interaction_id, approved=False, principal=principal, channel="system", comment=comment
            )

    async def checkpoint(self) -> bool:
        """Hold while paused; report whether the work may go on."""
        await workflow.wait_condition(lambda: not self._state.paused or self._state.cancelled)
        return not self._state.cancelled

    def tool_finished(self, interaction_id: str | None, result: ToolResult) -> None:
        """Attach an approved run's result to its decision and release waiting updates."""
        if interaction_id is None:
            return
        outcome = self._state.decided.get(interaction_id)
        if outcome is not None:
            outcome.tool_result = result.model_dump(mode="json")
            self._card_decided(interaction_id, outcome)
        self._settled.add(interaction_id)

    def settle(self, interaction_id: str) -> None:
        """The decision's consequence is in place (a gate opened): answer the waiting update."""
        self._settled.add(interaction_id)

    # ------------------------------------------------------------ decisions

    def check_response(self, response: InteractionResponse) -> None:
        """Validator of `respond_checked`: unknown, already decided, or a principal not allowed."""
        approvals.check_response(self._state, response)

    async def respond_checked(self, response: InteractionResponse) -> InteractionOutcome:
        """Decide, and answer once the approved tool ran (or the denial is recorded)."""
        approvals.check_response(self._state, response)  # a racing twin may have decided it
        outcome = self._decide_response(response)
        if not outcome.complete:  # the two-person rule: counted, not decided
            return outcome
        await workflow.wait_condition(
            lambda: outcome.interaction_id in self._settled or self._state.cancelled
        )
        return self._state.decided[outcome.interaction_id]

    def respond(self, response: InteractionResponse) -> None:
        """Decide from a signal: an invalid decision is audited as rejected, not raised."""
        try:
            approvals.check_response(self._state, response)
        except ApplicationError as err:
            approvals.record_rejection(self._state, response, err.message)
            return
        self._decide_response(response)

    def reply(self, message: InboundMessage, request: InteractionRequest) -> None:
        """A chat message while `request` waits: read as its answer (confirm/cancel keywords, zh and en)."""
        if not approvals.may_decide(request, message.sender_id):
            reason = (
                f"{message.sender_id} may not answer {request.interaction_id}; "
                f"allowed approvers: {', '.join(request.approvers)}"
            )
            response = InteractionResponse(
                interaction_id=request.interaction_id,
                approved=False,
                principal=message.sender_id,
                channel=message.channel,
            )
            approvals.record_rejection(self._state, response, reason)
            self._surface.channel.text(reason)
            self.publish(
                TaskChunkType.ERROR, {"error": reason}, metadata={"interaction_id": request.interaction_id}
            )
            return
        if request.interaction_type == InteractionType.USER_INPUT:
            self._decide(
                request.interaction_id,
                approved=True,
                principal=message.sender_id,
                channel=message.channel,
                comment=None,
                response_data={"text": message.content},
            )
            return
        reply = interpret_reply(message.content)
        if reply == "approve" and escalation.already_approved(request, message.sender_id):
            reason = (
                f"{message.sender_id} already approved {request.interaction_id}; another approver is needed"
            )
            self._surface.channel.text(reason)
            return
        if reply == "approve" and escalation.needs_more(request):
            self._count(request, message.sender_id, message.channel)
            return
        comment = (
            message.content if reply != "ambiguous" else f"ambiguous reply {message.content!r} counts as deny"
        )
        self._decide(
            request.interaction_id,
            approved=reply == "approve",
            principal=message.sender_id,
            channel=message.channel,
            comment=comment,
        )

    def _count(self, request: InteractionRequest, principal: str, channel: str) -> InteractionOutcome:
        """A first approval of a two-person request: counted, shown as 1/2 everywhere."""
        outcome = escalation.count(self._state, request, principal, channel)
        self.publish(
            TaskChunkType.PROGRESS,
            {
                "interaction_id": request.interaction_id,
                "approvals": f"{len(request.approved_by)}/{request.approvals_required}",
                "approved_by": list(request.approved_by),
            },
            metadata={"interaction_id": request.interaction_id},
        )
        self._surface.channel.decided(request.model_copy(deep=True), outcome)
        self._surface.refresh()
        return outcome

    def _decide_response(self, response: InteractionResponse) -> InteractionOutcome:
        request = approvals.find_pending(self._state, response.interaction_id or "")
        principal = response.principal or Principal.ANONYMOUS
        if request is not None and response.approved and escalation.needs_more(request):
            return self._count(request, principal, response.channel)
        approved_by = list(request.approved_by) if request is not None else []
        outcome = self._decide(
            response.interaction_id or "",
            approved=response.approved,
            principal=response.principal or Principal.ANONYMOUS,
            channel=response.channel,
            comment=response.user_message,
            response_data=response.response_data,
        )
        if response.approved:
            outcome.approvals = [*approved_by, principal]
        data = response.response_data or {}
        if request is not None and response.approved and "arguments" in data:
            content = request.content if isinstance(request.content, dict) else {}
            approvals.audit_outcome(
                self._state.audit,
                "edited",
                outcome,
                f"proposed {json.dumps(content.get('tool_params'), sort_keys=True, default=str)}; "
                f"runs {json.dumps(data['arguments'], sort_keys=True, default=str)}",
            )
        if request is not None and response.approved and "grant" in data:
            grant = grants.record(self._state, request, outcome, str(data["grant"]))
            outcome.grant_id = grant.grant_id
            self.publish(
                TaskChunkType.PROGRESS,
                {"grant": grant.model_dump(mode="json"), "comment": grants.describe(grant)},
                metadata={"interaction_id": outcome.interaction_id, "grant_id": grant.grant_id},
            )
        return outcome

    def _decide(
        self,
        interaction_id: str,
        *,
        approved: bool,
        principal: str,
        channel: str,
        comment: str | None,
        response_data: dict[str, Any] | None = None,
    ) -> InteractionOutcome:
        outcome = approvals.decide(
            self._state,
            interaction_id,
            approved=approved,
            principal=principal,
            channel=channel,
            comment=comment,
            response_data=response_data,
        )
        if not approved:
            self._settled.add(interaction_id)
            self._card_decided(interaction_id, outcome)
        self._state.last_activity = outcome.decided_at
        self.publish(
            TaskChunkType.PROGRESS,
            {
                "interaction_id": interaction_id,
                "approved": approved,
                "decided_by": principal,
                "channel": channel,
                "comment": comment,
                **({"response_data": response_data} if response_data else {}),
            },
            metadata={"interaction_id": interaction_id},
        )
        self._surface.refresh()
        return outcome

    def _card_decided(self, interaction_id: str, outcome: InteractionOutcome) -> None:
        request = self._requests.pop(interaction_id, None)
        if request is not None:
            self._surface.channel.decided(request, outcome)
