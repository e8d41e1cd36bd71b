"""Taking a person's decision to the workflow that asked (a session, a graph, or a graph's task run).

One RPC that waits for the outcome (~6 ms less than accept-then-poll, bench/approval): the
update's validator refuses an unknown or decided interaction and a principal who may not decide
(`Refused`, by `ApplicationError.type`); a decision Temporal could not take in
SYNAPSE_DECISION_WAIT_SECONDS is `Unconfirmed`, saying whether it waits for a worker or for the tool.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from temporalio.client import Client

from contracts import InteractionOutcome, InteractionResponse
from contracts.names import RESPOND_CHECKED
from core.security import Caller
from core.settings import Settings
from workflows.identity import search

from . import workflow
from .errors import NotAnswered
from .sizes import check_size


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
    body: InteractionResponse,
    check_with: str,
) -> InteractionOutcome | Unconfirmed:
    """Run `respond_checked` on `workflow_id` as the caller: the outcome (`complete: false` while
    the two-person rule waits for a second approver), or `Unconfirmed`.

    Raises:
        TooLarge: The comment is over SYNAPSE_MAX_COMMENT_BYTES.
        Refused, NotFound, Closed: See `workflow.run_update`.
    """
    check_size(
        "user_message", body.user_message, settings.limits.max_comment_bytes, "SYNAPSE_MAX_COMMENT_BYTES"
    )
    response = body.model_copy(
        update={
            "interaction_id": interaction_id,
            "principal": caller.principal or body.principal,
            "channel": "http",
        }
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
        waiting = (description.typed_search_attributes.get(search.PENDING) or 0) > 0
        detail = (
            f"decision on {interaction_id!r} submitted, but no worker has processed it yet; "
            f"it is validated and applied when a worker runs (see {check_with})"
            if waiting
            else f"decision on {interaction_id!r} recorded; the approved tool is still running"
        )
        return Unconfirmed(interaction_id, detail)
    return outcome
