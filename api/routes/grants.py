"""A session's grants: what approvers allowed for the rest of the session, and revoking one."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from contracts import Grant, GrantList, GrantRevocation
from workflows.identity.ids import session_workflow_id
from workflows.session import SessionWorkflow

from ..calls import sessions
from ..calls.ref import WorkflowRef
from ..calls.sizes import check_size
from ..deps import Approver, ClientDep, GrantId, SessionKey, SettingsDep, Viewer
from ..errors import BUSY_RESPONSE, ERROR_RESPONSES

router = APIRouter(prefix="/sessions", tags=["grants"])


@router.get("/{key}/grants", response_model=GrantList, responses=ERROR_RESPONSES(401, 403, 404, 422))
async def list_grants(key: SessionKey, client: ClientDep, settings: SettingsDep, caller: Viewer) -> GrantList:
    """Every grant of the session (in force and revoked), with who granted it and how often it was used."""
    grants: list[Grant] = await WorkflowRef.session(key).query(
        client, SessionWorkflow.get_grants, wait=settings.api.query_wait
    )
    return GrantList(workflow_id=session_workflow_id(key), grants=grants)


@router.delete(
    "/{key}/grants/{grant_id}",
    response_model=Grant,
    responses={**BUSY_RESPONSE, **ERROR_RESPONSES(401, 403, 404, 409, 422)},
)
async def revoke_grant(
    key: SessionKey,
    grant_id: GrantId,
    client: ClientDep,
    settings: SettingsDep,
    caller: Approver,
    principal: Annotated[
        str | None,
        Query(max_length=200, description="Who revokes it (API keys off; with keys, the key's principal)."),
    ] = None,
    reason: Annotated[str | None, Query(description="Why; recorded in the audit.")] = None,
) -> Grant:
    """Revoke a grant (audited): later matching calls are asked for again. 404 unknown, 409 already revoked."""
    check_size("reason", reason, settings.limits.max_comment_bytes, "SYNAPSE_MAX_COMMENT_BYTES")
    who = caller.principal or principal or "anonymous"
    revocation = GrantRevocation(grant_id=grant_id, principal=who, channel="http", reason=reason)
    return await sessions.revoke_grant(client, key, revocation, within=settings.api.busy_retry_seconds)
