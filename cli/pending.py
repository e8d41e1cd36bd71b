"""`synapse pending`: every request waiting for the caller, across sessions and graphs.

It reads what the console's "waiting for me" reads, through the client (`core.client`): the
sessions with a request the caller may answer (`GET /sessions?waiting_for=`), the graphs with
requests waiting (`GET /graphs`), and each one's requests, kept when the caller may answer them
(`core.waiting.answerable_by`); one that cannot be read now is named on stderr. A graph's request its session relays is listed once, under the
session. The caller is the API key's principal, else `--principal`, else `$USER`.

Exit codes: 0 (whether or not something waits), 5 when the API could not be reached or failed.
"""

from __future__ import annotations

import asyncio
import json
import sys
from dataclasses import dataclass
from typing import TextIO

import httpx

from contracts import GraphView, InteractionRequest, LiveSession
from core.client import SynapseClient, SynapseError
from core.waiting import answerable_by
from core.wording.requests import about

LISTED = 500
"""Sessions and graphs read, newest first (the API's own limit)."""
UNAVAILABLE = 5


@dataclass(frozen=True)
class Waiting:
    """One request waiting for the caller, and where to answer it."""

    owner: str
    """`session KEY` or `graph ID`."""
    decide: str
    """The API path that decides it."""
    request: InteractionRequest

    def as_json(self) -> dict[str, object]:
        return {
            "owner": self.owner,
            "interaction_id": self.request.interaction_id,
            "kind": self.request.interaction_type,
            "summary": about(self.request),
            "asked_at": self.request.timestamp.isoformat().replace("+00:00", "Z"),
            "expires_at": self.request.expires_at.isoformat().replace("+00:00", "Z")
            if self.request.expires_at
            else None,
            "decide": f"POST {self.decide}",
        }


def pending(
    api: str,
    *,
    api_key: str | None,
    principal: str | None,
    as_json: bool,
    out: TextIO = sys.stdout,
    err: TextIO = sys.stderr,
) -> int:
    """List what waits for the caller; the exit code."""
    try:
        who, found, unread = asyncio.run(_find(api, api_key, principal))
    except SynapseError as failure:
        print(f"error: the API answered {failure.status}: {failure.detail}", file=err)
        return UNAVAILABLE
    except httpx.HTTPError as failure:
        print(f"error: the API at {api} could not be reached ({failure}); is `make up` running?", file=err)
        return UNAVAILABLE
    for problem in unread:
        print(f"warning: {problem}", file=err)
    if as_json:
        print(json.dumps([w.as_json() for w in found], ensure_ascii=False), file=out)
    elif not found:
        print(f"nothing waits for {who}", file=out)
    else:
        print(f"{len(found)} waiting for {who}:", file=out)
        for waiting in found:
            request = waiting.request
            print(f"  {waiting.owner} · {request.interaction_id} · {about(request)}", file=out)
            print(f"      decide: POST {waiting.decide}", file=out)
    return 0


async def _find(api: str, api_key: str | None, principal: str | None) -> tuple[str, list[Waiting], list[str]]:
    async with SynapseClient(api, api_key=api_key) as client:
        who = (await client.me()).principal or principal or "anonymous"
        sessions = await client.sessions(waiting_for=who, limit=LISTED)
        graphs = [g for g in await client.graphs(limit=LISTED) if g.pending and not g.closed]
        views: list[LiveSession | GraphView | BaseException] = [
            *await asyncio.gather(*(client.session(s.session_key) for s in sessions), return_exceptions=True),
            *await asyncio.gather(*(client.graph(g.graph_id) for g in graphs), return_exceptions=True),
        ]
    found: list[Waiting] = []
    unread: list[str] = []
    seen: set[tuple[str, str]] = set()
    owners = [
        *((f"session {s.session_key}", f"/sessions/{s.session_key}") for s in sessions),
        *((f"graph {g.graph_id}", f"/graphs/{g.graph_id}") for g in graphs),
    ]
    for (owner, path), view in zip(owners, views, strict=True):
        if isinstance(view, SynapseError):  # one that cannot be read now hides none of the others
            unread.append(f"{owner} could not be read: {view.detail}")
            continue
        if isinstance(view, BaseException):
            raise view
        for request in view.pending_interactions:
            key = (request.workflow_id, request.interaction_id)
            if key in seen or not answerable_by(request, who):
                continue
            seen.add(key)
            found.append(Waiting(owner, f"{path}/interactions/{request.interaction_id}", request))
    return who, found, unread
