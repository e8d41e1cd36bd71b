"""Deciding interactions over HTTP: approve or deny a pending tool call of a session.

A graph's decisions (`routes/graphs.py`) are checked and answered the same way (`check_matches`,
`answer`): 200 with the outcome, 202 while it is not confirmed or a second approver is needed.
"""

from __future__ import annotations

import dataclasses
from typing import Annotated, Any

from fastapi import APIRouter, Depends, HTTPException, Request
from fastapi.responses import JSONResponse

from contracts import InteractionDecision, InteractionOutcome
from core.security import Caller
from workflows.identity.ids import session_workflow_id

from ..calls import decisions
from ..calls.ref import WorkflowRef
from ..deps import ClientDep, InteractionId, SessionKey, SettingsDep, decider

router = APIRouter(prefix="/sessions", tags=["interactions"])

SessionDecider = Annotated[Caller, Depends(decider(lambda path: session_workflow_id(str(path["key"]))))]
"""An approver or higher; a refused caller's attempt is recorded in the session's audit trail."""

DECISION_RESPONSES: dict[int | str, dict[str, Any]] = {
    202: {
        "description": "Decision submitted but not processed, or the tool not finished, within "
        "SYNAPSE_DECISION_WAIT_SECONDS (60 s); or, under the two-person rule, a first approval counted "
        "(`complete: false`, `approvals`): another approver must approve too."
    },
    403: {
        "description": "The caller's role is below approver, the principal is not among the request's "
        "approvers, or the decision widens the floor (a wider sandbox) and needs an admin; the refusal is "
        "recorded in the audit trail."
    },
    404: {"description": "No such workflow or pending interaction."},
    409: {"description": "Already decided, the same person approving twice, or the workflow is closed."},
    503: {
        "description": "Temporal had no room for the decision within SYNAPSE_DECISION_WAIT_SECONDS "
        "(nothing was applied); retry after `Retry-After` seconds."
    },
}


def check_matches(interaction_id: str, body: InteractionDecision) -> None:
    """422 when the body names another interaction than the path."""
    if body.interaction_id not in (None, interaction_id):
        raise HTTPException(
            422,
            f"body.interaction_id {body.interaction_id!r} does not match the path's {interaction_id!r}",
        )


def answer(result: InteractionOutcome | decisions.Unconfirmed) -> InteractionOutcome | JSONResponse:
    """200 with a complete outcome; 202 with one still waiting for a second approver, or with
    what an unconfirmed decision waits for."""
    if isinstance(result, decisions.Unconfirmed):
        return JSONResponse(status_code=202, content=dataclasses.asdict(result))
    if not result.complete:  # the two-person rule: counted, nothing applied yet
        return JSONResponse(status_code=202, content=result.model_dump(mode="json"))
    return result


@router.post(
    "/{key}/interactions/{interaction_id}",
    response_model=InteractionOutcome,
    responses=DECISION_RESPONSES,
)
async def decide(
    key: SessionKey,
    interaction_id: InteractionId,
    body: InteractionDecision,
    client: ClientDep,
    settings: SettingsDep,
    caller: SessionDecider,
    request: Request,
) -> Any:
    """Approve or deny, or answer a question; answers with the decision and, after approval, the
    tool's result. A request the session's graph (or one of its tasks) asked is decided there.

    A question (USER_INPUT) is answered with `response_data.text`; `approved` may be left out
    there (an answer). A tool approval needs `approved` (422 naming the field without it).
    """
    check_matches(interaction_id, body)
    result = await decisions.decide(
        client,
        settings,
        caller,
        target=WorkflowRef.session(key),
        interaction_id=interaction_id,
        body=body,
    )
    if isinstance(result, InteractionOutcome):
        request.app.state.metrics.decided(result)
    return answer(result)
