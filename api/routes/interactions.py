"""Deciding interactions over HTTP: approve or deny a pending tool call."""

from __future__ import annotations

from datetime import timedelta
from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Path
from fastapi.responses import JSONResponse

from contracts import InteractionOutcome, InteractionResponse
from workflows import search
from workflows.session import SessionWorkflow

from .. import session_calls
from ..deps import Approver, ClientDep, SettingsDep
from ..limits import check_size
from .sessions import SessionKey

router = APIRouter(prefix="/sessions", tags=["interactions"])


@router.post(
    "/{key}/interactions/{interaction_id}",
    response_model=InteractionOutcome,
    responses={
        202: {
            "description": "Decision submitted but not processed, or the tool not finished, within "
            "SYNAPSE_DECISION_WAIT_SECONDS (60 s)."
        },
        403: {"description": "The principal may not decide this interaction."},
        404: {"description": "No such session or pending interaction."},
        409: {"description": "Already decided, or the session is closed."},
        503: {
            "description": "Temporal had no room for the decision within SYNAPSE_DECISION_WAIT_SECONDS "
            "(nothing was applied); retry after `Retry-After` seconds."
        },
    },
)
async def decide(
    key: SessionKey,
    interaction_id: Annotated[str, Path(min_length=1, max_length=200)],
    body: InteractionResponse,
    client: ClientDep,
    settings: SettingsDep,
    caller: Approver,
) -> Any:
    """Approve or deny; answers with the decision and, after approval, the tool's result."""
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
    # One RPC that waits for the outcome: ~6 ms less than accept-then-poll (bench/approval).
    try:
        outcome: InteractionOutcome = await session_calls.run_update(
            client,
            key,
            lambda h: h.execute_update(
                SessionWorkflow.respond_checked,
                response,
                rpc_timeout=timedelta(seconds=settings.api.decision_wait_seconds),
            ),
            within=settings.api.decision_wait_seconds,
        )
    except session_calls.NotAnswered:
        # A query would need a worker too; the search attributes come straight from the server.
        description = await session_calls.handle_for(client, key).describe()
        waiting = (description.typed_search_attributes.get(search.PENDING) or 0) > 0
        detail = (
            f"decision on {interaction_id!r} submitted, but no worker has processed it yet; "
            f"it is validated and applied when a worker runs (see GET /sessions/{key})"
            if waiting
            else f"decision on {interaction_id!r} recorded; the approved tool is still running"
        )
        return JSONResponse(status_code=202, content={"interaction_id": interaction_id, "detail": detail})
    return outcome
