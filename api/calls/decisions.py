"""Taking a person's decision to the workflow that asked (a session, a graph, or a graph's task run).

One RPC that waits for the outcome (~6 ms less than accept-then-poll, bench/approval): the
update's validator refuses an unknown or decided interaction and a principal who may not decide
(`Refused`, by `ApplicationError.type`); a decision Temporal could not take in
SYNAPSE_DECISION_WAIT_SECONDS is `Unconfirmed`, saying whether it waits for a worker or for the tool.

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
    AuditEntry,
    AuditKind,
    ErrorType,
    InteractionDecision,
    InteractionOutcome,
    InteractionRequest,
    InteractionResponse,
    InteractionType,
)
from contracts.names import RESPOND, RESPOND_CHECKED
from core.security import Caller
from core.settings import Settings
from workflows.identity import search_attributes
from workflows.session import SessionWorkflow

from . import sessions, workflow
from .busy import retry_while_busy
from .errors import CallError, Invalid, NotAnswered, Problem, Refused
from .sizes import check_size

log = logging.getLogger(__name__)

PENDING_QUERY = SessionWorkflow.get_pending
"""`get_pending`: a session, a graph and a task run each answer it (by this name) with what waits."""
DECIDED = (AuditKind.APPROVED, AuditKind.DENIED)
"""The audit kinds that record a decision taken."""
_UNKNOWABLE = (CallError, RPCError, WorkflowQueryFailedError, TimeoutError)
"""A read that could not be answered (no worker, no such workflow, out of time)."""


@dataclass(frozen=True)
class Unconfirmed:
    """A decision submitted but not confirmed in time; `detail` says what it waits for."""

    interaction_id: str
    detail: str


async def decide(
    client: Client,
    settings: Settings,
    caller: Caller,
    *,
    workflow_id: str,
    name: str,
    interaction_id: str,
    body: InteractionDecision,
    check_with: str,
) -> InteractionOutcome | Unconfirmed:
    """Run `respond_checked` on `workflow_id` as the caller: the outcome (`complete: false` while
    the two-person rule waits for a second approver), or `Unconfirmed`.

    Raises:
        TooLarge: The comment is over SYNAPSE_MAX_COMMENT_BYTES.
        Invalid: `approved` is missing and the interaction is not a question.
        Refused, NotFound, Closed: See `workflow.run_update`.
    """
    check_size(
        "user_message", body.user_message, settings.limits.max_comment_bytes, "SYNAPSE_MAX_COMMENT_BYTES"
    )
    approved = body.approved
    if approved is None:
        approved = await _approved_by_answering(
            client, workflow_id, name, interaction_id, wait=settings.api.query_wait
        )
    response = InteractionResponse(
        **body.model_dump(exclude={"approved", "interaction_id", "principal", "channel"}),
        approved=approved,
        interaction_id=interaction_id,
        principal=caller.principal or body.principal,
        channel="http",
    )
    wait = settings.api.decision_wait_seconds
    try:
        outcome: InteractionOutcome = await workflow.run_update(
            client,
            workflow_id,
            name,
            RESPOND_CHECKED,
            response,
            InteractionOutcome,
            wait=timedelta(seconds=wait),
            within=wait,
            check_with=check_with,
        )
    except NotAnswered:
        # A query would need a worker too; the search attributes come straight from the server.
        description = await client.get_workflow_handle(workflow_id).describe()
        waiting = (description.typed_search_attributes.get(search_attributes.PENDING) or 0) > 0
        detail = (
            f"decision on {interaction_id!r} submitted, but no worker has processed it yet; "
            f"it is validated and applied when a worker runs (see {check_with})"
            if waiting
            else f"decision on {interaction_id!r} recorded; the approved tool is still running"
        )
        return Unconfirmed(interaction_id, detail)
    return outcome


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
    """`respond_checked` on `workflow_id` for a channel that answers before the decision is taken.

    `accepted` says whether the workflow accepted the decision yet (validated and recorded; an
    approved tool may still run). A refused approver is also sent through the `respond` signal,
    which records the attempt in the audit trail (the update's validator leaves no trace), whenever
    the refusal comes.
    """

    def __init__(self, client: Client, workflow_id: str, name: str, response: InteractionResponse) -> None:
        self.client = client
        self.workflow_id = workflow_id
        self.name = name
        self.response = response
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
                        RESPOND_CHECKED,
                        self.response,
                        result_type=InteractionOutcome,
                        wait_for_stage=WorkflowUpdateStage.ACCEPTED,
                    ),
                    within=within,
                )
                self.accepted = True
                outcome: InteractionOutcome = await update.result()
        except Refused as refusal:
            if refusal.error_type == ErrorType.APPROVER_NOT_ALLOWED:
                await handle.signal(RESPOND, self.response)
            raise
        return outcome
