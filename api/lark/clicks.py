"""Approve/Deny clicks on Lark approval cards (`card.action.trigger` callbacks).

A button's `value` is `{"action": "approve"|"deny", "session_key", "interaction_id", "workflow_id"}`
(set by `activities/channels/lark/cards.py`; `workflow_id` is the workflow that asked: the session,
or a graph or task run whose request the session relays; cards sent before it existed name only
the session). The click runs that workflow's `respond_checked` update as the clicker (principal = open_id, channel `lark`;
`api/calls/decisions.py` `Submission`) and is answered with a toast, plus the card
redrawn without buttons (`cards.decided_card`) once the decision is taken. Lark drops
answers after 3 s, so the click waits ~2 s: an approved tool still running then is reported as
running (a quick tool runs inside the workflow task that takes the decision, so then even the
acceptance is pending: "still applying"; so too when a starved API took the whole window), and
the session's outbox updates the card when it is done. Refusals come from the update's
validator, by `ApplicationError.type` (`Refused.error_type`); a refused approver is also
audited, even when the refusal comes after the answer.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from lark_oapi.event.callback.model.p2_card_action_trigger import P2CardActionTrigger
from temporalio.client import Client
from temporalio.service import RPCError

from activities.channels.lark.cards import (
    APPROVE,
    APPROVE_FOR_SESSION,
    approval_card,
    decided_card,
    parse_card_action,
)
from contracts import ErrorType, InteractionOutcome, InteractionRequest, InteractionResponse, Principal
from core.settings import Settings
from workflows.identity.ids import session_workflow_id

from ..calls import decisions, sessions
from ..calls.busy import is_busy
from ..calls.errors import Closed, NotFound, Refused

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


async def _already_decided(client: Client, click: Click, refusal: Refused) -> Answer:
    if click.workflow_id != session_workflow_id(click.session_key):
        return toast("info", str(refusal))  # a graph's or task run's own words
    decision = await decisions.recorded_decision(
        client, click.session_key, click.interaction_id, wait=QUERY_TIMEOUT
    )
    if decision is None:  # none recorded, or no worker to read it: the validator's own words will do
        return toast("info", str(refusal))
    when = decision.at.strftime("%Y-%m-%d %H:%M UTC")
    if decision.principal == Principal.TIMEOUT:
        return toast("info", f"This request expired at {when}: nobody decided in time, so it was denied.")
    if decision.principal == Principal.CANCEL:
        return toast("info", f"The session was cancelled at {when}; this request was denied.")
    return toast("info", f"Already {decision.kind} by {decision.principal} ({decision.channel}) at {when}.")


async def _refused(client: Client, click: Click, refusal: Refused) -> Answer:
    if refusal.error_type == ErrorType.APPROVER_NOT_ALLOWED:
        return toast("error", f"Not allowed: {refusal}.")
    if refusal.error_type == ErrorType.INTERACTION_ALREADY_DECIDED:
        return await _already_decided(client, click, refusal)
    return toast("error", str(refusal))


def _answer(
    kind: str,
    text: str,
    request: InteractionRequest | None,
    outcome: InteractionOutcome,
    session_key: str = "",
    link: str | None = None,
) -> Answer:
    """A toast, plus the card redrawn (without buttons once decided; "1/2" while a second approver is needed)."""
    answer = toast(kind, text)
    if request is not None:
        if outcome.complete:
            card = decided_card(request, outcome)
        else:
            card = approval_card(
                request.model_copy(update={"approved_by": outcome.approvals}), session_key, link
            )
        answer["card"] = {"type": "raw", "data": card}
    return answer


def still_applying() -> Answer:
    """The answer to a click whose decision is not taken yet (it goes on after the answer)."""
    return toast("info", "Decision received; Synapse is still applying it. The card updates when done.")


def _still_running(click: Click, request: InteractionRequest | None, accepted: bool) -> Answer:
    if not accepted:
        # A worker may be running a quick tool inside the very workflow task that takes this
        # decision (acceptance is reported when that task completes), or no worker is up.
        return still_applying()
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


async def decide(
    client: Client, click: Click, background: set[asyncio.Task[Any]], settings: Settings
) -> Answer:
    """Run the decision and say how it went, within `ANSWER_BUDGET_SECONDS` (a card redrawn keeps
    its link to the console, from `settings`).

    A decision still in flight then goes on in a task kept in `background`.
    """
    deadline = time.monotonic() + ANSWER_BUDGET_SECONDS
    # The request the card shows, to redraw it with the decision (None when unknown: the decision says why).
    request = await decisions.request_if_pending(
        client, click.workflow_id, click.interaction_id, wait=QUERY_TIMEOUT
    )
    response = InteractionResponse(
        interaction_id=click.interaction_id,
        approved=click.approved,
        principal=click.operator,
        channel=CHANNEL,
        response_data={"grant": click.grant} if click.grant else None,
        metadata={"lark_message_id": click.card_message_id} if click.card_message_id else {},
    )
    # It may outlive the callback's answer (by up to `OUTCOME_WAIT_SECONDS`).
    submission = decisions.Submission(
        client, click.workflow_id, sessions.name_of(click.session_key), response
    )
    # One deadline for both steps: each Temporal call may poll several times within its own timeout.
    task = asyncio.ensure_future(submission.run(within=OUTCOME_WAIT_SECONDS))
    await asyncio.wait({task}, timeout=max(deadline - time.monotonic(), 0.1))
    if not task.done():
        background.add(task)
        task.add_done_callback(background.discard)
        task.add_done_callback(_log_late)
        return _still_running(click, request, submission.accepted)
    try:
        outcome = task.result()
    except Refused as refusal:
        return await _refused(client, click, refusal)
    except (NotFound, Closed) as gone:
        return toast("info", f"Nothing to decide: {gone}.")
    except RPCError as err:
        if is_busy(err):
            return toast(
                "warning", "Synapse is busy and took no decision; press the button again in a moment."
            )
        raise
    link = settings.console_link(click.workflow_id, click.interaction_id)
    return _answer("success", _decided_text(outcome), request, outcome, click.session_key, link)
