"""Server-sent events as the API writes them: one `SseEvent` per event of a response's lines."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import httpx

from contracts import SentChunk, TaskStreamChunk


@dataclass(frozen=True)
class SseEvent:
    """One server-sent event: `id` (chunks only), `event` (its type) and `data`."""

    id: str | None
    event: str
    data: str

    @property
    def chunk(self) -> TaskStreamChunk:
        """The chunk of a chunk event (a `SentChunk`: with its event's sentence)."""
        return SentChunk.model_validate_json(self.data)

    @property
    def control(self) -> dict[str, Any]:
        """The data of a `reconnect` or `error` event: `detail` and `last_event_id`."""
        data: dict[str, Any] = json.loads(self.data)
        return data


def sse_events(response: httpx.Response) -> AsyncIterator[SseEvent]:
    """The events of an SSE response (comments and `retry:` lines skipped)."""
    return parse_sse(response.aiter_lines())


async def parse_sse(lines: AsyncIterator[str]) -> AsyncIterator[SseEvent]:
    """The events in the lines of an event stream (comments and `retry:` lines skipped)."""
    event_id: str | None = None
    kind = "message"
    data: list[str] = []
    async for line in lines:
        if line == "":
            if data:
                yield SseEvent(event_id, kind, "\n".join(data))
            event_id, kind, data = None, "message", []
        elif line.startswith("id: "):
            event_id = line[4:]
        elif line.startswith("event: "):
            kind = line[7:]
        elif line.startswith("data: "):
            data.append(line[6:])
