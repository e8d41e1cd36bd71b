"""The text of server-sent events: chunks, and the control events that end a stream.

A chunk is `id: <sequence_id>`, `event: <chunk_type>`, `data: <SentChunk JSON>`: the chunk, its
event in words beside it (`text` and `tone`, from `core.wording`: the console shows them as they
are, so every client says the same). A stream
the server ends early says why in a last event, whose data carries `last_event_id`: the id to
resume after (`Last-Event-ID` header or `?after=`), so a reconnecting client misses nothing:
- `reconnect`: the client fell too far behind (or the API is stopping); reconnect now;
- `error`: Temporal could not be read; reconnect when it is back.

A stream that is complete (its workflow closed: a session ended, a graph finished) ends with an
`end` event, whose data has the same shape: there is nothing to reconnect for.
"""

from __future__ import annotations

import json

from contracts import SentChunk, TaskStreamChunk
from core.wording import line_of

RETRY = "retry: 1000\n\n"
"""First line of every stream: browsers reconnect one second after a stream ends."""
KEEPALIVE = ": keepalive\n\n"
"""A comment line sent on idle streams, so proxies keep them open and dead clients are noticed."""
RECONNECT = "reconnect"
ERROR = "error"
END = "end"
"""The last event of a complete stream: its workflow closed; a client stops following it."""


def sent(chunk: TaskStreamChunk) -> SentChunk:
    """The chunk as it is sent: with its event's sentence and tone."""
    line = line_of(chunk.content)
    return SentChunk.model_construct(**dict(chunk), text=line.text, tone=line.tone)


def chunk_event(chunk: TaskStreamChunk) -> str:
    """One SSE event: `id:` is the chunk's sequence id, `event:` its type, `data:` its JSON with its
    event's sentence (`SentChunk`)."""
    return (
        f"id: {chunk.sequence_id}\nevent: {chunk.chunk_type.value}\ndata: {sent(chunk).model_dump_json()}\n\n"
    )


def control_event(kind: str, detail: str, last_event_id: int) -> str:
    """A last event that ends a stream (`reconnect` or `error` early, `end` when it is complete),
    saying where to resume (or where it ended)."""
    data = json.dumps({"detail": detail, "last_event_id": last_event_id})
    return f"event: {kind}\ndata: {data}\n\n"
