"""Taking a person's decision to the workflow that asked (a session, a graph, or a graph's task run).

Every door here (`POST .../interactions/{id}`, a card click) makes one typed `Decision` — who,
their role, the channel, the door, what they said — and runs the workflow's `decide_checked`
update, whose validator is the one check every door shares (`workflows/supervision/checks.py`).
One RPC waits for the outcome (~6 ms less than accept-then-poll, bench/approval). A refusal
(`Refused`, by `ApplicationError.type`) is sent again by the `decide` signal, which records it in
the workflow's audit trail (an update's validator leaves no trace), so a refused HTTP decision is
audited like a refused chat reply. A request a session only shows (its graph asked it) answers
`InteractionRelayed` naming the workflow that asked; the decision goes there. A decision Temporal
could not take in SYNAPSE_DECISION_WAIT_SECONDS is `Unconfirmed`, saying whether it waits for a
worker or for the tool.

An answer to a question (USER_INPUT) may leave `approved` out: it is read as `true` (answering is
not approving anything). Every other kind needs `approved`; finding which kind an interaction is
costs one query, made only when `approved` is missing.

A channel that must answer before a decision is taken (a Lark card click is answered within 3 s)
runs it as a `Submission`, which says whether the workflow accepted it yet and may outlive that
answer; it reads what waits and what was decided with `request_if_pending` and
`recorded_decision`, which give None rather than wait for what cannot be known quickly.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from datetime import timedelta

from temporalio.client import Client, WorkflowQueryFailedError, WorkflowUpdateStage
from temporalio.service import RPCError

from contracts import (
    Answer,
    AuditEntry,
    AuditKind,
    Decision,
    DecisionAnswer,
    DecisionSource,
    ErrorType,
    GrantScope,
    InteractionDecision,
    InteractionOutcome,
    InteractionRequest,
    InteractionType,
    Principal,
    Said,
    SandboxProfile,
    Verdict,
)
from contracts.names import DECIDE, DECIDE_CHECKED
from core.security import Caller
from core.settings import Settings
from workflows.identity import search_attributes
from workflows.session import SessionWorkflow

from . import sessions, workflow
from .busy import retry_while_busy
from .errors import CallError, Invalid, NotAnswered, Problem, Refused
from .ref import WorkflowRef
from .sizes import check_size

log = logging.getLogger(__name__)

PENDING_QUERY = SessionWorkflow.get_pending
"""`get_pending`: a session, a graph and a task run each answer it (by this name) with what waits."""
DECIDED = (AuditKind.APPROVED, AuditKind.DENIED)
"""The audit kinds that record a decision taken."""
_UNKNOWABLE = (CallError, RPCError, WorkflowQueryFailedError, TimeoutError)
"""A read that could not be answered (no worker, no such workflow, out of time)."""
AUDITED = (
    ErrorType.ROLE_NOT_ALLOWED,
    ErrorType.APPROVER_NOT_ALLOWED,
    ErrorType.APPROVER_ALREADY_COUNTED,
    ErrorType.INTERACTION_ALREADY_DECIDED,
    ErrorType.INVALID_RESPONSE,
)
"""Refusals of a decision on a request the workflow holds: each is recorded there (`record_refusal`)."""
RESPONSE_FIELDS = ("text", "arguments", "grant", "sandbox")
HTTP_CHANNEL = "http"
"""The channel of a decision taken through the HTTP API (the console and the REPL use it too)."""
AGUI_CHANNEL = "ag-ui"
"""The channel of a decision an AG-UI frontend sent in a run's `resume` (`POST /ag-ui`)."""


@dataclass(frozen=True)
class Unconfirmed:
    """A decision submitted but not confirmed in time; `detail` says what it waits for."""

    interaction_id: str
    detail: str


def said_of(body: InteractionDecision, approved: bool) -> Said:
    """What an HTTP body says, typed: a question's answer (`response_data.text` with approving), or a
    verdict with its edit (`arguments`), `grant` and `sandbox`.

    Raises:
        Invalid: `response_data` holds what no decision says (each problem named by its field).
    """
    data = body.response_data or {}
    problems: list[Problem] = []

    def wrong(field: str, msg: str, kind: str = "value_error") -> None:
        problems.append(Problem(("response_data", field) if field else ("response_data",), msg, kind))

    unknown = sorted(set(data) - set(RESPONSE_FIELDS))
    if unknown:
        wrong(
            "",
            f"takes `text` (a question's answer), or `arguments`, `grant` and `sandbox` (with "
            f"approving a tool call), not {unknown}",
            "unknown_field",
        )
    text = data.get("text")
    if "text" in data and approved and (not isinstance(text, str) or not text.strip()):
        wrong("text", "the answer to a question: a non-empty string (or decline with approved=false)")
    if "text" in data and set(data) & {"arguments", "grant", "sandbox"}:
        wrong(
            "text",
            "answers a question; `arguments`, `grant` and `sandbox` go with approving a tool call, not with an answer",
        )
    if "arguments" in data and not isinstance(data["arguments"], dict):
        wrong(
            "arguments", f"must be an object of the tool's arguments, got {type(data['arguments']).__name__}"
        )
    if "grant" in data and data["grant"] not in set(GrantScope):
        wrong("grant", f"{data['grant']!r} is not a grant; expected one of {', '.join(GrantScope)}")
    if "sandbox" in data and data["sandbox"] not in set(SandboxProfile):
        wrong("sandbox", f"{data['sandbox']!r} is not a sandbox; expected one of {', '.join(SandboxProfile)}")
    if problems:
        raise Invalid(problems)
    if isinstance(text, str) and approved:
        return Answer(text=text)
    return Verdict(
        approved=approved,
        edit=data.get("arguments"),
        grant=GrantScope(data["grant"]) if "grant" in data else None,
        sandbox=SandboxProfile(data["sandbox"]) if "sandbox" in data else None,
    )


def decision_of(
    caller: Caller,
    body: InteractionDecision,
    interaction_id: str,
    approved: bool,
    channel: str = HTTP_CHANNEL,
) -> Decision:
    """The `Decision` an HTTP body makes: by the key's principal (keys off: the name given), with the
    key's role, through `channel` (`http`; `ag-ui` for an AG-UI run's resume)."""
    return Decision(
        interaction_id=interaction_id,
        principal=caller.principal or body.principal or Principal.ANONYMOUS,
        role=caller.role,
        channel=channel,
        source=DecisionSource.HTTP,
        said=said_of(body, approved),
        comment=body.user_message,
        metadata=body.metadata,
    )


async def decide(
    client: Client,
    settings: Settings,
    caller: Caller,
    *,
    target: WorkflowRef,
    interaction_id: str,
    body: InteractionDecision,
    channel: str = HTTP_CHANNEL,
) -> InteractionOutcome | Unconfirmed:
    """Run `decide_checked` on `target` (the workflow that asked, in the words of the session or
    graph the caller named) as the caller, recorded as taken through `channel`: the outcome (`complete: false` while
    the two-person rule waits for a second approver), or `Unconfirmed`. A refusal is recorded in the
    workflow's audit trail before it is raised.

    Raises:
        TooLarge: The comment is over SYNAPSE_MAX_COMMENT_BYTES.
        Invalid: `approved` is missing and the interaction is not a question, or `response_data`
            says what no decision can.
        Refused, NotFound, Closed: See `WorkflowRef.run_update`.
    """
    check_size(
        "user_message", body.user_message, settings.limits.max_comment_bytes, "SYNAPSE_MAX_COMMENT_BYTES"
    )
    approved = body.approved
    if approved is None:
        approved = await _approved_by_answering(
            client, target.workflow_id, target.name, interaction_id, wait=settings.api.query_wait
        )
    decision = decision_of(caller, body, interaction_id, approved, channel)
    wait = settings.api.decision_wait_seconds
    try:
        return await _taken(client, target, decision, wait=wait)
    except Refused as refusal:
        owner = relayed_to(refusal)
        if owner is None:
            raise
        return await _taken(client, target.on(owner), decision, wait=wait)


def relayed_to(refusal: Refused) -> str | None:
    """The workflow that asked a request the refusing workflow only relays (None: another refusal)."""
    if refusal.error_type == ErrorType.INTERACTION_RELAYED and refusal.details:
        return str(refusal.details[0])
    return None


async def _taken(
    client: Client, target: WorkflowRef, decision: Decision, *, wait: float
) -> InteractionOutcome | Unconfirmed:
    try:
        answer = await target.run_update(
            client, DECIDE_CHECKED, decision, DecisionAnswer, wait=timedelta(seconds=wait), within=wait
        )
    except Refused as refusal:
        if refusal.error_type in AUDITED:
            await record_refusal(client, target.workflow_id, decision, str(refusal))
        raise
    except NotAnswered:
        # A query would need a worker too; the search attributes come straight from the server.
        description = await target.handle(client).describe()
        waiting = (description.typed_search_attributes.get(search_attributes.PENDING) or 0) > 0
        detail = (
            f"decision on {decision.interaction_id!r} submitted, but no worker has processed it yet; "
            f"it is validated and applied when a worker runs (see {target.check_with})"
            if waiting
            else f"decision on {decision.interaction_id!r} recorded; the approved tool is still running"
        )
        return Unconfirmed(decision.interaction_id, detail)
    return outcome_of(answer, decision)


def outcome_of(answer: DecisionAnswer, decision: Decision) -> InteractionOutcome:
    """The workflow's answer to `decision` with what it left out (the decision's interaction id,
    principal and channel) filled in from the decision: what every door answers with."""
    return InteractionOutcome.model_validate(
        {
            **answer.model_dump(),
            "interaction_id": answer.interaction_id or decision.interaction_id,
            "decided_by": answer.decided_by or decision.principal,
            "channel": answer.channel or decision.channel,
        }
    )


async def record_refusal(client: Client, workflow_id: str, decision: Decision, reason: str) -> None:
    """Send a refused decision, marked `refused`, by the `decide` signal: the workflow records the
    refusal in its audit trail and never takes it (a request relayed elsewhere is passed on there).
    Best effort: a workflow that is gone has nothing to record it in."""
    try:
        refused = decision.model_copy(update={"refused": reason})
        await client.get_workflow_handle(workflow_id).signal(DECIDE, refused)
    except RPCError as err:
        log.info("refused decision on %s not recorded in %s: %s", decision.interaction_id, workflow_id, err)


async def record_refused_caller(
    client: Client,
    workflow_id: str,
    caller: Caller,
    interaction_id: str,
    body: object,
    channel: str = HTTP_CHANNEL,
) -> None:
    """Record in the workflow's audit that a caller whose role may not decide tried to (the API
    refused them before any workflow was asked): as the decision they sent, as far as it reads."""
    try:
        sent = InteractionDecision.model_validate(body)
        decision = decision_of(caller, sent, interaction_id, sent.approved is True, channel)
    except (ValueError, CallError):
        decision = Decision(
            interaction_id=interaction_id,
            principal=caller.principal or Principal.ANONYMOUS,
            role=caller.role,
            channel=channel,
            source=DecisionSource.HTTP,
            said=Verdict(approved=False),
        )
    reason = f"{caller.principal} has role {caller.role}; deciding needs approver or higher"
    await record_refusal(client, workflow_id, decision, reason)


async def _approved_by_answering(
    client: Client, workflow_id: str, name: str, interaction_id: str, *, wait: timedelta
) -> bool:
    """`approved` for a decision that left it out: true for a pending question.

    An interaction that is not pending (already decided, or unknown) gets `false`, which the
    update's validator refuses all the same, with its own words (who decided it, and when; or
    what is pending): were it to become pending in between, a denial is the safe reading.

    Raises:
        Invalid: It is a pending tool approval or confirmation, which must say `approved`.
    """
    request = await pending_request(client, workflow_id, name, interaction_id, wait=wait)
    if request is None:
        return False
    if request.interaction_type == InteractionType.USER_INPUT:
        return True
    kind = request.interaction_type.value.replace("_", " ")
    raise Invalid(
        [
            Problem(
                loc=("approved",),
                msg=f"required to decide {kind} {interaction_id!r}: true to approve, false to deny "
                "(only an answer to a question may leave it out)",
                type="missing",
            )
        ]
    )


async def pending_request(
    client: Client, workflow_id: str, name: str, interaction_id: str, *, wait: timedelta
) -> InteractionRequest | None:
    """The request `interaction_id` while it waits for a decision (None once decided, or unknown).

    Raises:
        NotFound, NotAnswered: See `workflow.query`.
    """
    pending: list[InteractionRequest] = await workflow.query(
        client, workflow_id, name, PENDING_QUERY, wait=wait
    )
    return next((r for r in pending if r.interaction_id == interaction_id), None)


async def request_if_pending(
    client: Client, workflow_id: str, interaction_id: str, *, wait: timedelta
) -> InteractionRequest | None:
    """`pending_request`, or None when it cannot be known within `wait` (the decision says why)."""
    try:
        return await pending_request(
            client, workflow_id, f"workflow {workflow_id!r}", interaction_id, wait=wait
        )
    except _UNKNOWABLE:
        return None


async def recorded_decision(
    client: Client, session_key: str, interaction_id: str, *, wait: timedelta
) -> AuditEntry | None:
    """The session's audit entry of the decision taken on `interaction_id` (who, where, when);
    None when it has none, or it cannot be read within `wait` (no worker to answer)."""
    try:
        return await sessions.audit_entry(
            client,
            session_key,
            lambda e: e.interaction_id == interaction_id and e.kind in DECIDED,
            wait=wait,
        )
    except _UNKNOWABLE as failure:
        log.info("audit of %s unavailable: %s", session_key, failure)
        return None


class Submission:
    """`decide_checked` on `workflow_id` for a channel that answers before the decision is taken.

    `accepted` says whether the workflow accepted the decision yet (validated and recorded; an
    approved tool may still run). A refusal is also sent through the `decide` signal, which records
    it in the audit trail (the update's validator leaves no trace), whenever the refusal comes.
    """

    def __init__(self, client: Client, workflow_id: str, name: str, decision: Decision) -> None:
        self.client = client
        self.workflow_id = workflow_id
        self.name = name
        self.decision = decision
        self.accepted = False

    async def run(self, *, within: float) -> InteractionOutcome:
        """The outcome, waited for at most `within` seconds (retrying while Temporal is busy).

        Raises:
            Refused, NotFound, Closed, NotAnswered: See `workflow.update_errors`.
            RPCError: Temporal stayed busy (`busy.is_busy`) or failed otherwise.
            TimeoutError: No outcome within `within`.
        """
        handle = self.client.get_workflow_handle(self.workflow_id)
        try:
            async with (
                asyncio.timeout(within),
                workflow.update_errors(self.client, self.workflow_id, self.name),
            ):
                update = await retry_while_busy(
                    lambda: handle.start_update(
                        DECIDE_CHECKED,
                        self.decision,
                        id=workflow.update_id(),
                        result_type=DecisionAnswer,
                        wait_for_stage=WorkflowUpdateStage.ACCEPTED,
                    ),
                    within=within,
                )
                self.accepted = True
                answer: DecisionAnswer = await update.result()
        except Refused as refusal:
            if refusal.error_type in AUDITED:
                await record_refusal(self.client, self.workflow_id, self.decision, str(refusal))
            raise
        return outcome_of(answer, self.decision)
