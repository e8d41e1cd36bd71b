"""One workflow's chunks as an HTTP response: the route parameters, the documented answers, the body.

Sessions (`GET /sessions/{key}/events`) and graphs (`GET /graphs/{id}/events`) answer the same way:
every client of this API process shares one subscription to the workflow (`StreamHub`), resumes
with `Last-Event-ID` or `?after=`, and is told why a stream ended early.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import Header, Query
from fastapi.responses import Response, StreamingResponse

from .hub import StreamHub

After = Annotated[int | None, Query(ge=-1, description="Send chunks with sequence_id > after.")]
LastEventId = Annotated[
    str | None, Header(pattern=r"^-?[0-9]{1,18}$", description="Resume after this id (SSE).")
]

EVENTS_RESPONSES: dict[int | str, dict[str, Any]] = {
    200: {
        "content": {"text/event-stream": {}},
        "description": "SentChunk events (`id:` = sequence_id, `event:` = chunk_type; `data:` the chunk, "
        "its `content` one event of `contracts.events` told apart by `event`, with the event's "
        "sentence in `text` and `tone`). A stream "
        "the server ends early says why in a last `reconnect` event (this client fell too far "
        "behind) or `error` event (Temporal could not be read); its data is "
        '`{"detail": ..., "last_event_id": N}`: reconnect with `Last-Event-ID: N` (or `?after=N`). '
        "A complete stream (the workflow closed: the session ended, the graph finished) ends with an "
        "`end` event of the same shape: stop following it.",
    },
    204: {
        "description": "The stream is complete and the client has all of it: the workflow closed (the "
        "session ended, the graph finished) and nothing follows `after`. Stop following it (a "
        "browser's `EventSource` does)."
    },
    404: {"description": "No such workflow."},
}


@dataclass(frozen=True)
class EventStream:
    """What every events route answers with (`deps.Events`): this process's hub, and where the
    client resumes."""

    hub: StreamHub
    after: int
    """Chunks with a greater sequence_id are sent (-1: from the start)."""

    @classmethod
    def resuming(cls, hub: StreamHub, after: int | None, last_event_id: str | None) -> EventStream:
        """`?after=`, else `Last-Event-ID`, else from the start."""
        return cls(
            hub, after if after is not None else int(last_event_id) if last_event_id is not None else -1
        )

    async def of(self, workflow_id: str) -> Response:
        """The workflow's chunks after `after`, then live ones, until it closes; 204 to a resume when
        the workflow has closed and the client has every chunk (what stops a browser's `EventSource`
        reconnecting). A first request costs no more than before: it is not asked."""
        if self.after >= 0 and await self.hub.complete(workflow_id, self.after):  # only a resume asks
            return Response(status_code=204)
        return sse_response(self.hub.events(workflow_id, self.after))


def sse_response(events: AsyncIterator[str]) -> StreamingResponse:
    """SSE text as a response that no cache or proxy holds back."""
    return StreamingResponse(
        events,
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )
