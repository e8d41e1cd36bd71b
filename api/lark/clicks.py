"""Approve/Deny clicks on Lark approval cards (`card.action.trigger` callbacks).

A button's `value` is `{"action": "approve"|"deny", "session_key", "interaction_id", "workflow_id"}`
(set by `activities/channels/lark/cards.py`; `workflow_id` is the workflow that asked: the session,
or a graph or task run whose request the session relays; cards sent before it existed name only
the session). The click runs that workflow's `respond_checked` update as the clicker (principal = open_id, channel `lark`) and is answered with a toast, plus the card
redrawn without buttons (`cards.decided_card`) once the decision is taken. Lark drops
answers after 3 s, so the click waits ~2 s: an approved tool still running then is reported as
running (a quick tool runs inside the workflow task that takes the decision, so then even the
acceptance is pending: "still applying"), and the session's outbox updates the card when it is
done. Refusals come from the update's validator, by `ApplicationError.type`; a refused approver
is also sent through the `respond` signal, which records the attempt in the audit trail, even
when the refusal comes after the answer.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from lark_oapi.event.callback.model.p2_card_action_trigger import P2CardActionTrigger
from temporalio.client import (
    Client,
    WorkflowQueryFailedError,
    WorkflowUpdateFailedError,
    WorkflowUpdateStage,
)
from temporalio.exceptions import ApplicationError
from temporalio.service import RPCError

from activities.channels.lark.cards import (
    APPROVE,
    APPROVE_FOR_SESSION,
    approval_card,
    decided_card,
    parse_card_action,
)
from contracts import (
    AuditTrail,
    ErrorType,
    InteractionOutcome,
    InteractionRequest,
    InteractionResponse,
    Principal,
)
from workflows.identity.ids import session_workflow_id
from workflows.session import SessionWorkflow
from workflows.supervision.handlers import SupervisionHandlers

from ..calls import sessions
from ..calls.busy import is_busy, retry_while_busy
from ..calls.workflow import is_not_found, why_unavailable

log = logging.getLogger(__name__)

CHANNEL = "lark"
ANSWER_BUDGET_SECONDS = 2.2
"""Time a click may spend on Temporal; Lark drops callback answers after 3 s."""
OUTCOME_WAIT_SECONDS = 60.0
"""How long a decision still in flight after the answer is followed (to audit a late refusal)."""
QUERY_TIMEOUT = timedelta(seconds=0.5)

Answer = dict[str, Any]
"""A card callback's answer: `{"toast": {...}}`, optionally with `"card": {"type": "raw", "data": ...}`."""


@dataclass(frozen=True)
class Click:
    """A decision taken by pressing a card button."""

    session_key: str
    interaction_id: str
    approved: bool
    operator: str
    card_message_id: str | None
    workflow_id: str
    """The workflow that asked (the session, or a graph / task run it relays)."""
    grant: str | None = None
    """`session` when the button was "Approve for this session"."""


def toast(kind: str, content: str) -> Answer:
    """A callback answer that shows a toast (`kind`: success, info, warning, error)."""
    return {"toast": {"type": kind, "content": content}}


def read_click(data: P2CardActionTrigger) -> Click | Answer:
    """The click's decision, or the toast explaining why the button cannot decide anything."""
    event = data.event
    action = parse_card_action(event.action.value if event and event.action else None)
    operator = event.operator.open_id if event and event.operator else None
    if action is None:
        return toast("error", "This button is not a Synapse approval button.")
    if not operator:
        return toast("error", "Lark did not say who clicked; nothing was decided.")
    message_id = event.context.open_message_id if event and event.context else None
    owner = action.workflow_id or session_workflow_id(action.session_key)
    return Click(
        action.session_key,
        action.interaction_id,
        action.action in (APPROVE, APPROVE_FOR_SESSION),
        operator,
        message_id,
        owner,
        grant="session" if action.action == APPROVE_FOR_SESSION else None,
    )


def _decided_text(outcome: InteractionOutcome) -> str:
    if not outcome.complete:
        return f"Approved by {outcome.decided_by} ({len(outcome.approvals)}/2): another approver must approve too."
    verb = "Approved" if outcome.approved else "Denied"
    granted = (
        f" The same call is allowed for the rest of the session ({outcome.grant_id})."
        if outcome.grant_id
        else ""
    )
    return f"{verb} by {outcome.decided_by} ({outcome.channel}).{granted}"


async def _already_decided(client: Client, click: Click, err: ApplicationError) -> Answer:
    if click.workflow_id != session_workflow_id(click.session_key):
        return toast("info", err.message)  # a graph's or task run's own words
    try:
        audit: AuditTrail = await sessions.handle_for(client, click.session_key).query(
            SessionWorkflow.get_audit, rpc_timeout=QUERY_TIMEOUT
        )
    except (RPCError, WorkflowQueryFailedError, TimeoutError) as failure:
        # No worker to answer the query: the validator's own words will do.
        log.info("audit of %s unavailable for a card answer: %s", click.session_key, failure)
        return toast("info", err.message)
    decision = next(
        (
            e
            for e in reversed(audit.entries)
            if e.interaction_id == click.interaction_id and e.kind in ("approved", "denied")
        ),
        None,
    )
    if decision is None:
        return toast("info", err.message)
    when = decision.at.strftime("%Y-%m-%d %H:%M UTC")
    if decision.principal == Principal.TIMEOUT:
        return toast("info", f"This request expired at {when}: nobody decided in time, so it was denied.")
    if decision.principal == Principal.CANCEL:
        return toast("info", f"The session was cancelled at {when}; this request was denied.")
    return toast("info", f"Already {decision.kind} by {decision.principal} ({decision.channel}) at {when}.")


async def _refused(client: Client, click: Click, err: ApplicationError) -> Answer:
    if err.type == ErrorType.APPROVER_NOT_ALLOWED:
        return toast("error", f"Not allowed: {err.message}.")
    if err.type == ErrorType.INTERACTION_ALREADY_DECIDED:
        return await _already_decided(client, click, err)
    return toast("error", err.message)


async def _pending_request(client: Client, click: Click) -> InteractionRequest | None:
    """The request the card shows, to redraw the card with the decision (None when unknown)."""
    try:
        pending: list[InteractionRequest] = await client.get_workflow_handle(click.workflow_id).query(
            SessionWorkflow.get_pending,
            rpc_timeout=QUERY_TIMEOUT,  # every supervised workflow has it
        )
    except (RPCError, WorkflowQueryFailedError, TimeoutError):
        return None  # the update below says what is wrong
    return next((r for r in pending if r.interaction_id == click.interaction_id), None)


def _answer(
    kind: str,
    text: str,
    request: InteractionRequest | None,
    outcome: InteractionOutcome,
    session_key: str = "",
) -> Answer:
    """A toast, plus the card redrawn (without buttons once decided; "1/2" while a second approver is needed)."""
    answer = toast(kind, text)
    if request is not None:
        if outcome.complete:
            card = decided_card(request, outcome)
        else:
            card = approval_card(request.model_copy(update={"approved_by": outcome.approvals}), session_key)
        answer["card"] = {"type": "raw", "data": card}
    return answer


class _Update:
    """`respond_checked` for one click, remembering whether the workflow accepted it yet.

    It may outlive the callback's answer (by up to `OUTCOME_WAIT_SECONDS`): a refused approver
    is audited whenever the refusal comes.
    """

    def __init__(self, client: Client, click: Click, response: InteractionResponse) -> None:
        self.handle = client.get_workflow_handle(click.workflow_id)
        self.response = response
        self.accepted = False

    async def run(self) -> InteractionOutcome:
        try:
            async with asyncio.timeout(OUTCOME_WAIT_SECONDS):
                update = await retry_while_busy(
                    lambda: self.handle.start_update(
                        SupervisionHandlers.respond_checked,
                        self.response,
                        wait_for_stage=WorkflowUpdateStage.ACCEPTED,
                    ),
                    within=OUTCOME_WAIT_SECONDS,
                )
                self.accepted = True
                outcome: InteractionOutcome = await update.result()
                return outcome
        except WorkflowUpdateFailedError as err:
            cause = err.cause
            if isinstance(cause, ApplicationError) and cause.type == ErrorType.APPROVER_NOT_ALLOWED:
                # The update's validator leaves no trace; its signal twin audits the attempt.
                await self.handle.signal(SupervisionHandlers.respond, self.response)
            raise


def _still_running(click: Click, request: InteractionRequest | None, accepted: bool) -> Answer:
    if not accepted:
        # A worker may be running a quick tool inside the very workflow task that takes this
        # decision (acceptance is reported when that task completes), or no worker is up.
        return toast("info", "Decision received; Synapse is still applying it. The card updates when done.")
    # Validated and recorded by the workflow; only the approved tool is still running.
    running = InteractionOutcome(
        interaction_id=click.interaction_id,
        approved=click.approved,
        decided_by=click.operator,
        channel=CHANNEL,
        decided_at=datetime.now(UTC),
    )
    text = "Approved. The tool is running; the card shows its result when done."
    return _answer("success", text if click.approved else "Denied.", request, running)


def _log_late(task: asyncio.Task[InteractionOutcome]) -> None:
    error = None if task.cancelled() else task.exception()
    if error is not None:
        log.info("a Lark card decision finished after its answer: %r", error)


async def decide(client: Client, click: Click, background: set[asyncio.Task[Any]]) -> Answer:
    """Run the decision and say how it went, within `ANSWER_BUDGET_SECONDS`.

    A decision still in flight then goes on in a task kept in `background`.
    """
    deadline = time.monotonic() + ANSWER_BUDGET_SECONDS
    request = await _pending_request(client, click)
    response = InteractionResponse(
        interaction_id=click.interaction_id,
        approved=click.approved,
        principal=click.operator,
        channel=CHANNEL,
        response_data={"grant": click.grant} if click.grant else None,
        metadata={"lark_message_id": click.card_message_id} if click.card_message_id else {},
    )
    update = _Update(client, click, response)
    # One deadline for both steps: each Temporal call may poll several times within its own timeout.
    task = asyncio.ensure_future(update.run())
    await asyncio.wait({task}, timeout=max(deadline - time.monotonic(), 0.1))
    if not task.done():
        background.add(task)
        task.add_done_callback(background.discard)
        task.add_done_callback(_log_late)
        return _still_running(click, request, update.accepted)
    try:
        outcome = task.result()
    except WorkflowUpdateFailedError as err:
        cause = err.cause
        if isinstance(cause, ApplicationError):
            return await _refused(client, click, cause)
        return toast("error", f"The session could not take the decision: {cause}")
    except RPCError as err:
        if is_not_found(err):
            gone = await why_unavailable(client, click.workflow_id, sessions.name_of(click.session_key))
            return toast("info", f"Nothing to decide: {gone}.")
        if is_busy(err):
            return toast(
                "warning", "Synapse is busy and took no decision; press the button again in a moment."
            )
        raise
    return _answer("success", _decided_text(outcome), request, outcome, click.session_key)
