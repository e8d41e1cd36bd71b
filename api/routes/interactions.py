"""Deciding interactions over HTTP: approve or deny a pending tool call."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Path
from fastapi.responses import JSONResponse
from temporalio.client import WorkflowUpdateStage

from contracts import InteractionOutcome, InteractionResponse
from workflows.session import SessionWorkflow

from .. import sessions
from ..deps import Approver, ClientDep
from .sessions import SessionKey

router = APIRouter(prefix="/sessions", tags=["interactions"])

RESULT_WAIT = timedelta(seconds=60)
"""How long the request waits for the approved tool to finish before answering 202."""


@router.post(
    "/{key}/interactions/{interaction_id}",
    response_model=InteractionOutcome,
    responses={
        202: {"description": "Decision recorded; the approved tool is still running."},
        403: {"description": "The principal may not decide this interaction."},
        404: {"description": "No such session or pending interaction."},
        409: {"description": "Already decided, or the session is closed."},
    },
)
async def decide(
    key: SessionKey,
    interaction_id: Annotated[str, Path(min_length=1, max_length=200)],
    body: InteractionResponse,
    client: ClientDep,
    caller: Approver,
) -> Any:
    """Approve or deny; answers with the decision and, after approval, the tool's result."""
    if body.interaction_id not in (None, interaction_id):
        raise HTTPException(
            422,
            f"body.interaction_id {body.interaction_id!r} does not match the path's {interaction_id!r}",
        )
    response = body.model_copy(
        update={
            "interaction_id": interaction_id,
            "principal": caller.principal or body.principal,
            "channel": "http",
        }
    )
    handle = await sessions.run_update(
        client,
        key,
        lambda h: h.start_update(
            SessionWorkflow.respond_checked, response, wait_for_stage=WorkflowUpdateStage.ACCEPTED
        ),
    )
    try:
        outcome: InteractionOutcome = await sessions.run_update(
            client, key, lambda _h: asyncio.wait_for(handle.result(), RESULT_WAIT.total_seconds())
        )
    except TimeoutError:
        detail = f"decision on {interaction_id!r} recorded; the approved tool is still running"
        return JSONResponse(status_code=202, content={"interaction_id": interaction_id, "detail": detail})
    return outcome
