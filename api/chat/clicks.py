"""A click on an approval card's button, in any chat channel: decided as the clicker, answered in words.

The channel reads its callback into a `Click` (the button's `CardAction`, who clicked, their role by
the channel's approver settings, the card). `decide` makes it a `Decision` (source `click`) and runs
the asking workflow's `decide_checked` update as the clicker (principal = the channel's user id;
`api/calls/decisions.py` `Submission`) and says how it went in a `ClickAnswer`:
what kind of notice, its words, and the request and decision to redraw the card with. Chats drop
answers after ~3 s, so a click waits ~2 s: an approved tool still running then is reported as
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
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from temporalio.client import Client
from temporalio.service import RPCError

from activities.channels.actions import CardAction
from contracts import (
    Decision,
    DecisionSource,
    ErrorType,
    GrantScope,
    InteractionOutcome,
    InteractionRequest,
    Principal,
    Role,
    Verdict,
)
from contracts.names import GRAPH_PREFIX
from core.times import utc_text
from workflows.identity.ids import session_workflow_id

from ..calls import decisions
from ..calls.busy import is_busy
from ..calls.errors import Closed, NotFound, Refused
from ..calls.ref import WorkflowRef

log = logging.getLogger(__name__)

ANSWER_BUDGET_SECONDS = 2.2
"""Time a click may spend on Temporal; chats drop callback answers after 3 s."""
OUTCOME_WAIT_SECONDS = 60.0
"""How long a decision still in flight after the answer is followed (to audit a late refusal)."""
QUERY_TIMEOUT = timedelta(seconds=0.5)

Kind = Literal["success", "info", "warning", "error"]


@dataclass(frozen=True)
class Click:
    """A decision taken by pressing a card button."""

    channel: str
    action: CardAction
    operator: str
    """Who clicked: the channel's user id (the decision's principal)."""
    metadata: dict[str, Any] = field(default_factory=dict)
    """Recorded with the decision (the card's message id)."""
    role: Role = Role.viewer
    """The clicker's role by the channel's approver settings (`roles.chat_role`; set by the channel,
    which knows them: a click read without it decides nothing)."""

    @property
    def in_its_channel(self) -> bool:
        """Whether the button names a session of the channel it was clicked in, and that session or a
        graph (a card shows only the session's own requests and those its graph relays)."""
        own = session_workflow_id(self.action.session_key)
        return self.action.session_key.startswith(f"{self.channel}:") and (
            self.workflow_id == own or self.workflow_id.startswith(GRAPH_PREFIX)
        )

    @property
    def workflow_id(self) -> str:
        """The workflow that asked (the session, or a graph / task run it relays)."""
        return self.action.workflow_id or session_workflow_id(self.action.session_key)


@dataclass(frozen=True)
class ClickAnswer:
    """How a click went: a notice for the clicker, and the card to redraw (if any)."""

    kind: Kind
    text: str
    request: InteractionRequest | None = None
    """The request the card shows, to redraw it with `outcome` (None: leave the card)."""
    outcome: InteractionOutcome | None = None


def decided_text(outcome: InteractionOutcome) -> str:
    """The notice for a decision taken (or one approval of two counted)."""
    if not outcome.complete:
        return f"Approved by {outcome.decided_by} ({len(outcome.approvals)}/2): another approver must approve too."
    verb = "Approved" if outcome.approved else "Denied"
    granted = (
        f" The same call is allowed for the rest of the session ({outcome.grant_id})."
        if outcome.grant_id
        else ""
    )
    return f"{verb} by {outcome.decided_by} ({outcome.channel}).{granted}"


async def _already_decided(client: Client, click: Click, refusal: Refused) -> ClickAnswer:
    key = click.action.session_key
    if click.workflow_id != session_workflow_id(key):
        return ClickAnswer("info", str(refusal))  # a graph's or task run's own words
    decision = await decisions.recorded_decision(client, key, click.action.interaction_id, wait=QUERY_TIMEOUT)
    if decision is None:  # none recorded, or no worker to read it: the validator's own words will do
        return ClickAnswer("info", str(refusal))
    when = utc_text(decision.at)
    if decision.principal == Principal.TIMEOUT:
        return ClickAnswer(
            "info", f"This request expired at {when}: nobody decided in time, so it was denied."
        )
    if decision.principal == Principal.CANCEL:
        return ClickAnswer("info", f"The session was cancelled at {when}; this request was denied.")
    return ClickAnswer(
        "info", f"Already {decision.kind} by {decision.principal} ({decision.channel}) at {when}."
    )


async def _refused(client: Client, click: Click, refusal: Refused) -> ClickAnswer:
    if refusal.error_type in (ErrorType.APPROVER_NOT_ALLOWED, ErrorType.ROLE_NOT_ALLOWED):
        return ClickAnswer("error", f"Not allowed: {refusal}.")
    if refusal.error_type == ErrorType.INTERACTION_ALREADY_DECIDED:
        return await _already_decided(client, click, refusal)
    return ClickAnswer("error", str(refusal))


STILL_APPLYING = ClickAnswer(
    "info", "Decision received; Synapse is still applying it. The card updates when done."
)
"""The answer to a click whose decision is not taken yet (it goes on after the answer)."""


def _still_running(click: Click, request: InteractionRequest | None, accepted: bool) -> ClickAnswer:
    if not accepted:
        # A worker may be running a quick tool inside the very workflow task that takes this
        # decision (acceptance is reported when that task completes), or no worker is up.
        return STILL_APPLYING
    # Validated and recorded by the workflow; only the approved tool is still running.
    running = InteractionOutcome(
        interaction_id=click.action.interaction_id,
        approved=click.action.approved,
        decided_by=click.operator,
        channel=click.channel,
        decided_at=datetime.now(UTC),
    )
    text = "Approved. The tool is running; the card shows its result when done."
    return ClickAnswer("success", text if click.action.approved else "Denied.", request, running)


def _report(task: asyncio.Task[InteractionOutcome], on_decided: Callable[[InteractionOutcome], None]) -> None:
    if not task.cancelled() and task.exception() is None:
        on_decided(task.result())


def _log_late(task: asyncio.Task[InteractionOutcome]) -> None:
    error = None if task.cancelled() else task.exception()
    if error is not None:
        log.info("a card decision finished after its answer: %r", error)


async def decide(
    client: Client,
    click: Click,
    background: set[asyncio.Task[Any]],
    on_decided: Callable[[InteractionOutcome], None] | None = None,
) -> ClickAnswer:
    """Run the decision and say how it went, within `ANSWER_BUDGET_SECONDS`.

    A decision still in flight then goes on in a task kept in `background`; `on_decided` hears
    every decision taken (the API's metrics).
    """
    deadline = time.monotonic() + ANSWER_BUDGET_SECONDS
    action = click.action
    if not click.in_its_channel:
        return ClickAnswer(
            "error", "This button does not belong to a session of this chat; nothing was decided."
        )
    # The request the card shows, to redraw it with the decision (None when unknown: the decision says why).
    request = await decisions.request_if_pending(
        client, click.workflow_id, action.interaction_id, wait=QUERY_TIMEOUT
    )
    decision = Decision(
        interaction_id=action.interaction_id,
        principal=click.operator,
        role=click.role,
        channel=click.channel,
        source=DecisionSource.CLICK,
        said=Verdict(approved=action.approved, grant=GrantScope(action.grant) if action.grant else None),
        metadata=click.metadata,
    )
    # It may outlive the callback's answer (by up to `OUTCOME_WAIT_SECONDS`).
    submission = decisions.Submission(
        client, click.workflow_id, WorkflowRef.session(action.session_key).name, decision
    )
    # One deadline for both steps: each Temporal call may poll several times within its own timeout.
    task = asyncio.ensure_future(submission.run(within=OUTCOME_WAIT_SECONDS))
    if on_decided is not None:
        task.add_done_callback(lambda done: _report(done, on_decided))
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
        return ClickAnswer("info", f"Nothing to decide: {gone}.")
    except RPCError as err:
        if is_busy(err):
            return ClickAnswer(
                "warning", "Synapse is busy and took no decision; press the button again in a moment."
            )
        raise
    return ClickAnswer("success", decided_text(outcome), request, outcome)
