"""`GET /sessions/{key}/events`: the session's chunks as server-sent events."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Header, Query
from fastapi.responses import StreamingResponse

from workflows.ids import session_workflow_id

from .. import session_calls
from ..deps import ClientDep, HubDep, SettingsDep, Viewer
from .sessions import SessionKey

router = APIRouter(prefix="/sessions", tags=["events"])


EVENTS_RESPONSES: dict[int | str, dict[str, Any]] = {
    200: {
        "content": {"text/event-stream": {}},
        "description": "TaskStreamChunk events (`id:` = sequence_id, `event:` = chunk_type). A stream "
        "the server ends early says why in a last `reconnect` event (this client fell too far "
        "behind) or `error` event (Temporal could not be read); its data is "
        '`{"detail": ..., "last_event_id": N}`: reconnect with `Last-Event-ID: N` (or `?after=N`).',
    },
    404: {"description": "No such session."},
}


@router.get("/{key}/events", response_class=StreamingResponse, responses=EVENTS_RESPONSES)
async def events(
    key: SessionKey,
    client: ClientDep,
    hub: HubDep,
    settings: SettingsDep,
    caller: Viewer,
    after: Annotated[int | None, Query(ge=-1, description="Send chunks with sequence_id > after.")] = None,
    last_event_id: Annotated[
        str | None, Header(pattern=r"^-?[0-9]{1,18}$", description="Resume after this id (SSE).")
    ] = None,
) -> StreamingResponse:
    """Stream chunks (`id:` = sequence_id) until the session closes; resumable.

    Every client of this API process shares one subscription to the session, so any number of
    people can watch without slowing it down or taking the update slots decisions need.
    """
    await session_calls.get_status(client, key, wait=settings.api.query_wait)  # 404 before the stream
    resume_after = after if after is not None else int(last_event_id) if last_event_id is not None else -1
    return StreamingResponse(
        hub.events(session_workflow_id(key), resume_after),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )
