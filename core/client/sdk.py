"""`SynapseClient`: the HTTP API from Python (send, decide, intervene, follow events).

What tests, benchmarks and the interactive client build on. Bodies are the `contracts` models;
an answer that is not a success raises `SynapseError` with the status and the API's `detail`.
`events()` and `turn()` follow a session's server-sent events, resumed without loss when the
server asks to reconnect or the connection drops (`follow.py`).

    async with SynapseClient("http://127.0.0.1:8000") as synapse:
        await synapse.send("demo", "DELETE FROM orders WHERE status = 'cancelled'")
        async for chunk in synapse.events("demo"):
            if isinstance(chunk.content, RequestOpened):
                await synapse.decide("demo", chunk.content.request.interaction_id, approved=True)
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from typing import Any, Self
from urllib.parse import quote

import httpx
from pydantic import TypeAdapter

from contracts import (
    ApprovalRule,
    ArtifactInfo,
    AuditTrail,
    CallerView,
    Grant,
    GrantList,
    GraphCreated,
    GraphSummary,
    GraphView,
    InteractionOutcome,
    LiveSession,
    McpServerStatus,
    MessagePage,
    NewRule,
    SessionMessageAccepted,
    SessionSummary,
    TaskStreamChunk,
    ToolDescriptor,
)

from ..tls import tls_context
from .errors import SynapseError
from .follow import follow_events, follow_turn


class SynapseClient:
    """A client of one Synapse API."""

    def __init__(
        self,
        base_url: str,
        *,
        api_key: str | None = None,
        timeout: float = 60.0,
        max_connections: int | None = 100,
    ) -> None:
        """Connect lazily to `base_url` (e.g. `http://127.0.0.1:8000`), with an API key if set."""
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        limits = httpx.Limits(max_connections=max_connections, max_keepalive_connections=max_connections)
        self.http = httpx.AsyncClient(
            base_url=base_url, headers=headers, timeout=timeout, limits=limits, verify=tls_context()
        )

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *_exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the connections."""
        await self.http.aclose()

    async def _call(self, method: str, path: str, body: dict[str, Any] | None = None) -> httpx.Response:
        response = await self.http.request(method, path, json=body)
        if response.is_error:
            raise SynapseError.of(response)
        return response

    async def create_session(self, session_key: str | None = None, **fields: Any) -> LiveSession:
        """`POST /sessions` (`agent_id`, `approvers`, `approval_timeout_seconds` as keywords)."""
        body = {"session_key": session_key, **fields} if session_key else fields
        return LiveSession.model_validate_json((await self._call("POST", "/sessions", body)).content)

    async def send(self, key: str, content: str, *, principal: str | None = None) -> SessionMessageAccepted:
        """`POST /sessions/{key}/messages`: the message is on its way (the session starts if needed;
        `restarted` says when it started again after ending; a cancelled one is a 409 `SynapseError`)."""
        body: dict[str, Any] = {"content": content}
        if principal:
            body["principal"] = principal
        response = await self._call("POST", f"/sessions/{key}/messages", body)
        return SessionMessageAccepted.model_validate_json(response.content)

    def turn(
        self, key: str, content: str, *, principal: str | None = None
    ) -> AsyncGenerator[TaskStreamChunk]:
        """Send a message and follow its turn (ASYNC_STREAM): every chunk from its start to its end
        (`complete` or `cancelled`), however long a person takes to decide. A dropped connection
        is resumed on the session's stream after the last chunk seen.

        Raises:
            SynapseError: The API refused the message (4xx: a cancelled session, a bad body), or
                the stream could not be resumed.
        """
        body: dict[str, Any] = {"content": content, **({"principal": principal} if principal else {})}
        return follow_turn(self.http, key, body)

    async def cancel_turn(self, key: str, reason: str, principal: str | None = None) -> LiveSession:
        """`POST /sessions/{key}/turn/cancel`: what waits for a person is denied, the agent is told."""
        return await self._intervene(key, "turn/cancel", reason, principal)

    async def session(self, key: str) -> LiveSession:
        """`GET /sessions/{key}`: status, pending interactions, conversation."""
        return LiveSession.model_validate_json((await self._call("GET", f"/sessions/{key}")).content)

    async def audit(self, key: str) -> AuditTrail:
        """`GET /sessions/{key}/audit`: who decided what, where and when."""
        return AuditTrail.model_validate_json((await self._call("GET", f"/sessions/{key}/audit")).content)

    async def decide(
        self, key: str, interaction_id: str, *, approved: bool, **fields: Any
    ) -> InteractionOutcome | None:
        """Approve or deny; the outcome (with the tool's result), or None when it is still applying (202)."""
        return await self._decide(f"/sessions/{key}/interactions/{interaction_id}", approved, fields)

    async def _decide(self, path: str, approved: bool, fields: dict[str, Any]) -> InteractionOutcome | None:
        response = await self._call("POST", path, {"approved": approved, **fields})
        return (
            None if response.status_code == 202 else InteractionOutcome.model_validate_json(response.content)
        )

    async def pause(self, key: str, reason: str | None = None, principal: str | None = None) -> LiveSession:
        """`POST /sessions/{key}/pause` (as `principal` when the API is open)."""
        return await self._intervene(key, "pause", reason, principal)

    async def resume(self, key: str, reason: str | None = None, principal: str | None = None) -> LiveSession:
        """`POST /sessions/{key}/resume` (as `principal` when the API is open)."""
        return await self._intervene(key, "resume", reason, principal)

    async def cancel(self, key: str, reason: str | None = None, principal: str | None = None) -> LiveSession:
        """`POST /sessions/{key}/cancel` (as `principal` when the API is open)."""
        return await self._intervene(key, "cancel", reason, principal)

    async def _intervene(
        self, key: str, action: str, reason: str | None, principal: str | None = None
    ) -> LiveSession:
        body = {"reason": reason, **({"principal": principal} if principal else {})}
        response = await self._call("POST", f"/sessions/{key}/{action}", body)
        return LiveSession.model_validate_json(response.content)

    # ---------------------------------------------------------------- graphs

    async def submit_graph(self, blueprint: dict[str, Any], **fields: Any) -> GraphCreated:
        """`POST /graphs`: run a blueprint (`approvers`, `approval_timeout_seconds` as keywords)."""
        response = await self._call("POST", "/graphs", {"blueprint": blueprint, **fields})
        return GraphCreated.model_validate_json(response.content)

    async def graph(self, graph_id: str, *, offset: int = 0, limit: int = 100) -> GraphView:
        """`GET /graphs/{id}`: status, a page of tasks, edges, what waits for a person."""
        response = await self.http.get(f"/graphs/{graph_id}", params={"offset": offset, "limit": limit})
        if response.is_error:
            raise SynapseError.of(response)
        return GraphView.model_validate_json(response.content)

    async def intervene(self, graph_id: str, request: dict[str, Any]) -> GraphView:
        """`POST /graphs/{id}/interventions`: PAUSE, RESUME or ROLLBACK_AND_MODIFY a task."""
        response = await self._call("POST", f"/graphs/{graph_id}/interventions", request)
        return GraphView.model_validate_json(response.content)

    async def decide_graph(
        self, graph_id: str, interaction_id: str, *, approved: bool, **fields: Any
    ) -> InteractionOutcome | None:
        """Approve or deny a gate of the graph or a tool call of one of its tasks (None: 202)."""
        return await self._decide(f"/graphs/{graph_id}/interactions/{interaction_id}", approved, fields)

    def events(
        self, key: str, *, after: int | None = None, opened: asyncio.Event | None = None
    ) -> AsyncGenerator[TaskStreamChunk]:
        """Every chunk of the session after `after`, in order, until its stream ends (resumed after
        a `reconnect` or `error` event or a dropped connection; see `follow_events`). `opened` is set
        once the server answered the (first) request, i.e. the client is following.

        Raises:
            SynapseError: The API refused the stream (e.g. 404 for an unknown session), or it
                could not be resumed.
        """
        return follow_events(self.http, key, after=after, opened=opened)

    # ------------------------------------------------- what the interactive client reads and writes

    async def _get(self, path: str, **params: Any) -> httpx.Response:
        """GET with query parameters (None ones left out); an error answer raises `SynapseError`."""
        given = {name: value for name, value in params.items() if value is not None}
        response = await self.http.get(path, params=given)
        if response.is_error:
            raise SynapseError.of(response)
        return response

    async def send_attached(
        self, key: str, content: str, *, artifacts: list[str], principal: str | None = None
    ) -> SessionMessageAccepted:
        """`POST /sessions/{key}/messages` with artifacts attached (ids from `upload_artifact`)."""
        body: dict[str, Any] = {"content": content, "artifacts": artifacts}
        if principal:
            body["principal"] = principal
        response = await self._call("POST", f"/sessions/{key}/messages", body)
        return SessionMessageAccepted.model_validate_json(response.content)

    async def upload_artifact(
        self,
        content: bytes,
        *,
        name: str | None = None,
        media_type: str = "application/octet-stream",
        project: str | None = None,
    ) -> ArtifactInfo:
        """`POST /artifacts`: store large content (for `project`, if given); its `artifact_id` goes in
        a message's `artifacts`."""
        given = {"name": name, "project": project}
        response = await self.http.post(
            "/artifacts",
            content=content,
            params={key: value for key, value in given.items() if value},
            headers={"Content-Type": media_type},
        )
        if response.is_error:
            raise SynapseError.of(response)
        return ArtifactInfo.model_validate_json(response.content)

    async def sessions(
        self,
        *,
        status: str | None = None,
        waiting: bool | None = None,
        limit: int | None = None,
        waiting_for: str | None = None,
    ) -> list[SessionSummary]:
        """`GET /sessions`: sessions newest first (closed ones marked `closed`); `waiting_for`: only
        those with a request that principal may answer."""
        response = await self._get(
            "/sessions", status=status, waiting=waiting, limit=limit, waiting_for=waiting_for
        )
        return _LIST_OF_SESSIONS.validate_json(response.content)

    async def graphs(self, *, status: str | None = None, limit: int | None = None) -> list[GraphSummary]:
        """`GET /graphs`: graphs newest first (closed ones marked `closed`)."""
        return _LIST_OF_GRAPHS.validate_json((await self._get("/graphs", status=status, limit=limit)).content)

    async def messages(self, key: str, *, before: int | None = None, limit: int | None = None) -> MessagePage:
        """`GET /sessions/{key}/messages`: one page of the whole conversation, oldest first."""
        response = await self._get(f"/sessions/{key}/messages", before=before, limit=limit)
        return MessagePage.model_validate_json(response.content)

    async def grants(self, key: str) -> GrantList:
        """`GET /sessions/{key}/grants`: every grant of the session, in force and revoked."""
        return GrantList.model_validate_json((await self._get(f"/sessions/{key}/grants")).content)

    async def revoke_grant(
        self, key: str, grant_id: str, *, principal: str | None = None, reason: str | None = None
    ) -> Grant:
        """`DELETE /sessions/{key}/grants/{grant_id}`: its calls are asked for again (audited)."""
        params = {name: value for name, value in (("principal", principal), ("reason", reason)) if value}
        response = await self.http.delete(f"/sessions/{key}/grants/{grant_id}", params=params)
        if response.is_error:
            raise SynapseError.of(response)
        return Grant.model_validate_json(response.content)

    async def rules(self, **filters: str | None) -> list[ApprovalRule]:
        """`GET /rules` (`tool`, `scope`, `project`, `user`, `profile` as keywords)."""
        return _LIST_OF_RULES.validate_json((await self._get("/rules", **filters)).content)

    async def add_rule(self, rule: NewRule) -> ApprovalRule:
        """`POST /rules`: save an approval rule; the next call it covers is decided by it."""
        response = await self._call("POST", "/rules", rule.model_dump(mode="json", exclude_none=True))
        return ApprovalRule.model_validate_json(response.content)

    async def delete_rule(self, rule_id: str, *, principal: str | None = None) -> ApprovalRule:
        """`DELETE /rules/{rule_id}` (as `principal` when the API is open)."""
        path = f"/rules/{rule_id}" + (f"?principal={quote(principal)}" if principal else "")
        return ApprovalRule.model_validate_json((await self._call("DELETE", path)).content)

    async def me(self) -> CallerView:
        """`GET /me`: the key's principal, role and projects."""
        return CallerView.model_validate_json((await self._get("/me")).content)

    async def tools(self) -> list[ToolDescriptor]:
        """`GET /tools`: the tools agents may use, with their approval policies."""
        return _LIST_OF_TOOLS.validate_json((await self._get("/tools")).content)

    async def mcp_servers(self) -> list[McpServerStatus]:
        """`GET /mcp`: the declared MCP servers, their state and tools."""
        return _LIST_OF_MCP.validate_json((await self._get("/mcp")).content)


_LIST_OF_SESSIONS = TypeAdapter(list[SessionSummary])
_LIST_OF_GRAPHS = TypeAdapter(list[GraphSummary])
_LIST_OF_RULES = TypeAdapter(list[ApprovalRule])
_LIST_OF_TOOLS = TypeAdapter(list[ToolDescriptor])
_LIST_OF_MCP = TypeAdapter(list[McpServerStatus])
