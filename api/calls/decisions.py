"""Taking a person's decision to the workflow that asked (a session, a graph, or a graph's task run).

One RPC that waits for the outcome (~6 ms less than accept-then-poll, bench/approval): the
update's validator refuses an unknown or decided interaction and a principal who may not decide
(`Refused`, by `ApplicationError.type`); a decision Temporal could not take in
SYNAPSE_DECISION_WAIT_SECONDS is `Unconfirmed`, saying whether it waits for a worker or for the tool.

An answer to a question (USER_INPUT) may leave `approved` out: it is read as `true` (answering is
not approving anything). Every other kind needs `approved`; finding which kind an interaction is
costs one query, made only when `approved` is missing.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from temporalio.client import Client

from contracts import (
    InteractionDecision,
    InteractionOutcome,
    InteractionRequest,
    InteractionResponse,
    InteractionType,
)
from contracts.names import RESPOND_CHECKED
from core.security import Caller
from core.settings import Settings
from workflows.identity import search_attributes
from workflows.session import SessionWorkflow

from . import workflow
from .errors import Invalid, NotAnswered, Problem
from .sizes import check_size

PENDING_QUERY = SessionWorkflow.get_pending
"""`get_pending`: a session, a graph and a task run each answer it (by this name) with what waits."""


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
            lambda h: h.execute_update(
                RESPOND_CHECKED, response, result_type=InteractionOutcome, rpc_timeout=timedelta(seconds=wait)
            ),
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
    pending: list[InteractionRequest] = await workflow.query(
        client, workflow_id, name, PENDING_QUERY, wait=wait
    )
    request = next((r for r in pending if r.interaction_id == interaction_id), None)
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
