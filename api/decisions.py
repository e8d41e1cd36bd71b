"""Taking a person's decision to the workflow that asked (a session, a graph, or a graph's task run).

One RPC that waits for the outcome (~6 ms less than accept-then-poll, bench/approval): the
update's validator refuses an unknown or decided interaction and a principal who may not decide
(404 / 409 / 403 through `api/errors.py`); a decision Temporal could not take in
SYNAPSE_DECISION_WAIT_SECONDS is a 202 saying whether it waits for a worker or for the tool.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from fastapi import HTTPException
from fastapi.responses import JSONResponse
from temporalio.client import Client

from contracts import InteractionOutcome, InteractionResponse
from contracts.names import RESPOND_CHECKED
from core.security import Caller
from core.settings import Settings
from workflows.identity import search

from . import workflow_calls
from .limits import check_size
from .workflow_calls import NotAnswered

DECISION_RESPONSES: dict[int | str, dict[str, Any]] = {
    202: {
        "description": "Decision submitted but not processed, or the tool not finished, within "
        "SYNAPSE_DECISION_WAIT_SECONDS (60 s); or, under the two-person rule, a first approval counted "
        "(`complete: false`, `approvals`): another approver must approve too."
    },
    403: {"description": "The principal may not decide this interaction."},
    404: {"description": "No such workflow or pending interaction."},
    409: {"description": "Already decided, the same person approving twice, or the workflow is closed."},
    503: {
        "description": "Temporal had no room for the decision within SYNAPSE_DECISION_WAIT_SECONDS "
        "(nothing was applied); retry after `Retry-After` seconds."
    },
}


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
) -> InteractionOutcome | JSONResponse:
    """Run `respond_checked` on `workflow_id` as the caller; the outcome, or a 202 answer."""
    if body.interaction_id not in (None, interaction_id):
        raise HTTPException(
            422,
            f"body.interaction_id {body.interaction_id!r} does not match the path's {interaction_id!r}",
        )
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
        outcome: InteractionOutcome = await workflow_calls.run_update(
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
        return JSONResponse(status_code=202, content={"interaction_id": interaction_id, "detail": detail})
    if not outcome.complete:  # the two-person rule: counted, nothing applied yet
        return JSONResponse(status_code=202, content=outcome.model_dump(mode="json"))
    return outcome
