"""`GET /sessions/{key}/events`: the session's chunks as server-sent events."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Header, Query
from fastapi.responses import StreamingResponse

from workflows.ids import session_workflow_id

from .. import sessions
from ..deps import ClientDep, Viewer
from ..sse import session_events
from .sessions import SessionKey

router = APIRouter(prefix="/sessions", tags=["events"])


@router.get(
    "/{key}/events",
    response_class=StreamingResponse,
    responses={200: {"content": {"text/event-stream": {}}, "description": "TaskStreamChunk events."}},
)
async def events(
    key: SessionKey,
    client: ClientDep,
    caller: Viewer,
    after: Annotated[int | None, Query(ge=-1, description="Send chunks with sequence_id > after.")] = None,
    last_event_id: Annotated[int | None, Header(ge=-1, description="Resume after this id (SSE).")] = None,
) -> StreamingResponse:
    """Stream chunks (`id:` = sequence_id) until the session closes; resumable."""
    await sessions.get_status(client, key)  # 404 before the stream starts
    resume_after = after if after is not None else last_event_id if last_event_id is not None else -1
    return StreamingResponse(
        session_events(client, session_workflow_id(key), resume_after + 1),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )
