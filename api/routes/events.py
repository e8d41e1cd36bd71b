"""`GET /sessions/{key}/events`: the session's chunks as server-sent events."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import Response, StreamingResponse

from workflows.identity.ids import session_workflow_id

from ..calls import sessions
from ..deps import ClientDep, Events, SessionKey, SettingsDep, Viewer
from ..sse.response import EVENTS_RESPONSES

router = APIRouter(prefix="/sessions", tags=["events"])


@router.get("/{key}/events", response_class=StreamingResponse, responses=EVENTS_RESPONSES)
async def events(
    key: SessionKey,
    client: ClientDep,
    settings: SettingsDep,
    caller: Viewer,
    stream: Events,
) -> Response:
    """Stream chunks (`id:` = sequence_id) until the session closes; resumable.

    Every client of this API process shares one subscription to the session, so any number of
    people can watch without slowing it down or taking the update slots decisions need.
    """
    await sessions.get_status(client, key, wait=settings.api.query_wait)  # 404 before the stream
    return await stream.of(session_workflow_id(key))
