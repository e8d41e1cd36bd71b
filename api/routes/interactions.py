"""Deciding interactions over HTTP: approve or deny a pending tool call of a session."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path

from contracts import InteractionOutcome, InteractionResponse
from workflows.identity.ids import session_workflow_id

from .. import decisions, session_calls
from ..deps import Approver, ClientDep, SettingsDep
from .sessions import SessionKey

router = APIRouter(prefix="/sessions", tags=["interactions"])


InteractionId = Annotated[str, Path(min_length=1, max_length=200)]


@router.post(
    "/{key}/interactions/{interaction_id}",
    response_model=InteractionOutcome,
    responses=decisions.DECISION_RESPONSES,
)
async def decide(
    key: SessionKey,
    interaction_id: InteractionId,
    body: InteractionResponse,
    client: ClientDep,
    settings: SettingsDep,
    caller: Approver,
) -> Any:
    """Approve or deny; answers with the decision and, after approval, the tool's result."""
    return await decisions.decide(
        client,
        settings,
        caller,
        workflow_id=session_workflow_id(key),
        name=session_calls.name_of(key),
        interaction_id=interaction_id,
        body=body,
        check_with=f"GET /sessions/{key}",
    )
