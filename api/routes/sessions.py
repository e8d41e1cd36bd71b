"""Session routes: create, send messages, read status and audit, pause/resume/cancel."""

from __future__ import annotations

import asyncio
import uuid
from datetime import timedelta
from typing import Annotated, Any

from fastapi import APIRouter, Body, Header, HTTPException, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from temporalio.client import Client

from contracts import (
    ArchiveCursor,
    AuditEntry,
    AuditTrail,
    CreateSessionRequest,
    InboundMessage,
    LiveSession,
    MessagePage,
    MessageRequest,
    MessagesQuery,
    MessageWindow,
    SessionControl,
    SessionMessageAccepted,
    SessionStatus,
    SessionSummary,
    UniversalMessage,
)
from contracts.session import TurnStatus
from core.agent_registry import DEFAULT_AGENT
from core.artifacts import ArtifactNotFound, ArtifactStore
from core.outbound import OutboundRefused
from core.rules.profiles import profile_named
from core.security import Caller
from core.settings import Settings
from workflows.identity.ids import session_workflow_id
from workflows.session import SessionWorkflow

from ..calls import floor, listing, scope, sessions
from ..calls.archive import archived_items
from ..calls.controls import control_of
from ..calls.errors import NotFound
from ..calls.ref import WorkflowRef
from ..calls.sizes import check_size
from ..deps import (
    ArtifactsDep,
    ClientDep,
    HubDep,
    Operator,
    RegistryDep,
    SessionKey,
    SettingsDep,
    Viewer,
)
from ..errors import BUSY_RESPONSE, ERROR_RESPONSES
from ..limits import MESSAGE_HINT
from ..scope import artifact_in_reach, owners
from ..sse.response import sse_response
from ..sse.turns import turn_events, wait_for_turn

router = APIRouter(prefix="/sessions", tags=["sessions"])

OptionalControl = Annotated[SessionControl | None, Body()]

WHO_WAIT = timedelta(seconds=2)
"""How long `waiting_for` asks each waiting session who may answer (one that does not say is listed)."""
TURN_ENDED: tuple[TurnStatus, ...] = ("completed", "failed", "cancelled")
"""A SYNC answer with one of these (a turn's status, not the session's) is a 200; the others a 202."""


@router.get("", response_model=list[SessionSummary], responses=ERROR_RESPONSES(401, 403, 422))
async def list_sessions(
    client: ClientDep,
    settings: SettingsDep,
    caller: Viewer,
    status: Annotated[SessionStatus | None, Query(description="Only sessions in this status.")] = None,
    waiting: Annotated[bool, Query(description="Only sessions with a request waiting for a person.")] = False,
    limit: Annotated[int, Query(ge=1, le=500, description="At most this many, newest first.")] = 50,
    waiting_for: Annotated[
        str | None,
        Query(
            min_length=1,
            max_length=200,
            description="Only sessions with a request this principal may answer (its approvers "
            "name them, or name no one, or it escalated to them).",
        ),
    ] = None,
) -> list[SessionSummary]:
    """Sessions, newest first, from Temporal's visibility (their search attributes: it costs the
    sessions nothing); closed ones included, marked `closed`. With `waiting_for`, each waiting
    session is asked who may answer its requests. A key scoped to projects sees only theirs."""
    found = await listing.list_sessions(
        client,
        status=status,
        waiting=waiting or waiting_for is not None,
        limit=limit,
        within=scope.visible_to(caller),
    )
    if waiting_for is None:
        return found
    return await listing.waiting_for(client, found, waiting_for, wait=min(settings.api.query_wait, WHO_WAIT))


def _check_notify_url(url: str, settings: Settings) -> None:
    """422 naming `notify_url` when it can never be called: not http(s), or a literal address the
    worker would refuse (a name is judged when a notification is sent, after resolution)."""
    try:
        settings.webhooks.policy.check_url(url)
    except OutboundRefused as err:
        raise RequestValidationError(
            [{"loc": ("body", "notify_url"), "msg": str(err), "type": "value_error", "input": url}]
        ) from None


@router.post(
    "", status_code=201, response_model=LiveSession, responses=ERROR_RESPONSES(403, s403=floor.RULES)
)
async def create_session(
    body: CreateSessionRequest,
    client: ClientDep,
    settings: SettingsDep,
    registry: RegistryDep,
    caller: Operator,
    request: Request,
) -> LiveSession:
    """Start a session explicitly (a first message would also start one); 422 for an unknown agent
    or profile. The session is for `user` (the caller by default): their approval rules apply, and
    those of its `project` and `profile` (whose sandbox is its default).

    A session only tightens: its `policies` and `sandbox` may not be looser than its agent's and
    the deployment's, nor its `user` another person when keys are on, unless the caller is an
    admin; its `project` must be one the caller may act in. 403 names the rule.

    A key scoped to projects starts sessions in one of them: with no `project`, its only one, or
    422 when it has several. A session key of another project's session is 404, as one that does
    not exist would be for reads (session keys are shared by all projects: choose another).
    """
    if body.notify_url and not settings.webhooks.secret:
        raise HTTPException(
            422,
            "notify_url needs SYNAPSE_WEBHOOK_SECRET set (on the API and the workers): notifications are signed",
        )
    if body.notify_url:
        _check_notify_url(body.notify_url, settings)
    try:
        profile = profile_named(body.profile)
    except KeyError as err:
        raise HTTPException(422, f"profile: {err.args[0]}") from None
    key = body.session_key or uuid.uuid4().hex[:12]
    if (chat := sessions.chat_of(key)) is not None:
        raise HTTPException(
            422,
            f"session_key {key!r}: keys beginning {key.split(':')[0]}: belong to the {chat} channel, "
            "whose chats start those sessions with their own approvers; choose another key",
        )
    try:
        body = body.model_copy(update={"project": scope.project_to_start(caller, body.project)})
    except ValueError as err:
        raise HTTPException(422, str(err)) from None
    await scope.check(client, owners(request), caller, WorkflowRef.session(key), may_start=True)
    agent = registry.resolve(body.agent_id or DEFAULT_AGENT, key)
    agents_floor = floor.floor_of(agent, settings.tools.terminal_sandbox)
    body = floor.with_agents_defaults(body, agents_floor)
    refused = floor.refusals(body, caller, agents_floor, profile.sandbox)
    if refused:
        raise HTTPException(403, "; ".join(refused))
    config = sessions.new_config(
        settings, key, agent, **body.model_dump(exclude={"session_key"}, exclude_none=True)
    )
    config = config.model_copy(
        update={"user": body.user or caller.principal, "sandbox": body.sandbox or profile.sandbox}
    )
    await sessions.start_session(client, settings.temporal.task_queue, config)
    return await sessions.get_status(client, config.session_key, wait=settings.api.query_wait)


MESSAGE_RESPONSES: dict[int | str, dict[str, Any]] = {
    200: {
        "model": SessionMessageAccepted,
        "description": "`?wait=true` (SYNC): the turn ended; `status` and `answer` say how.",
        "content": {"text/event-stream": {}},
    },
    202: {
        "model": SessionMessageAccepted,
        "description": "Accepted (INTERACTIVE); with `?wait=true`, the turn waits for a person (`pending`) "
        "or still runs after SYNAPSE_SYNC_WAIT_SECONDS. With `Accept: text/event-stream` (ASYNC_STREAM) "
        "the answer is 200 and the turn's events, ending with it. `restarted: true` (with a `note`) when "
        "the session had ended (idle, failed, terminated) and this message started it again.",
    },
    **ERROR_RESPONSES(
        404,
        409,
        s404="A chat's session (`lark:…`, `dingtalk:…`) that is not running: its chat starts it, a message "
        "over HTTP only joins one that runs.",
        s409="The session was cancelled: a message does not start it again. `detail` says who cancelled "
        "it, when and why, and how to go on: another session key, or `POST /sessions` with this key.",
    ),
    **BUSY_RESPONSE,
}

Wait = Annotated[
    bool, Query(description="SYNC mode: answer with the turn's answer (200) or what it waits for (202).")
]


@router.post(
    "/{key}/messages",
    status_code=202,
    response_model=SessionMessageAccepted,
    response_model_exclude_none=True,
    responses=MESSAGE_RESPONSES,
)
async def post_message(
    key: SessionKey,
    body: MessageRequest,
    client: ClientDep,
    settings: SettingsDep,
    registry: RegistryDep,
    store: ArtifactsDep,
    hub: HubDep,
    caller: Operator,
    request: Request,
    wait: Wait = False,
    accept: Annotated[str | None, Header()] = None,
) -> Any:
    """Send a message to the session's agent; starts the session when needed (for a key scoped to
    one project, in that project; a key of several starts it with `POST /sessions` naming one).

    A session that ended (idle, failed) starts again as a new conversation (`restarted: true`); a
    cancelled one does not (409, saying who cancelled it and how to go on).
    Modes: INTERACTIVE (202 at once), SYNC (`?wait=true`), ASYNC_STREAM (`Accept: text/event-stream`).
    """
    limits = settings.limits
    check_size("content", body.content, limits.max_message_bytes, "SYNAPSE_MAX_MESSAGE_BYTES", MESSAGE_HINT)
    await _check_attached(request, store, caller, body.artifacts)
    stream = accept is not None and "text/event-stream" in accept
    message = InboundMessage(
        channel="http",
        sender_id=caller.principal or body.principal or "anonymous",
        role=caller.role,
        chat_id=key,
        content=body.content,
        message_id=f"http-{uuid.uuid4().hex}",
        metadata={"artifacts": list(body.artifacts)} if body.artifacts else {},
    )
    config = sessions.new_config(settings, key, registry.resolve(DEFAULT_AGENT, key))
    if caller.projects is not None:
        config = config.model_copy(update={"project": await message_project(request, client, caller, key)})
    queue, within, query_wait = (
        settings.temporal.task_queue,
        settings.api.busy_retry_seconds,
        settings.api.query_wait,
    )
    after = -1
    if sessions.chat_of(key) is not None:  # a chat's session: joined while it runs, never started here
        previous = None
        if wait or stream:
            after = await _stream_head(client, key, settings) - 1
        await sessions.send_to_running(client, key, message, within=within)
    elif wait or stream:  # the stream of a run the message starts begins at 0: read it before sending
        previous = await sessions.accepting(client, key, wait=query_wait)
        after = (0 if previous is not None else await _stream_head(client, key, settings)) - 1
        await sessions.send_message(client, queue, config, message, within=within)
    else:  # a new session's first message is one call
        previous = await sessions.deliver(client, queue, config, message, within=within, wait=query_wait)
    accepted = SessionMessageAccepted(
        session_key=key,
        workflow_id=session_workflow_id(key),
        message_id=message.message_id,
        restarted=previous is not None,
        note=sessions.restart_note(key, previous) if previous is not None else None,
    )
    if stream:
        assert message.message_id is not None
        return sse_response(turn_events(hub, accepted.workflow_id, after, message.message_id))
    if not wait:
        return accepted
    result = await wait_for_turn(hub, accepted, after, settings.api.sync_wait_seconds)
    ended = result.status in TURN_ENDED
    return JSONResponse(status_code=200 if ended else 202, content=result.model_dump(mode="json"))


async def _stream_head(client: Client, key: str, settings: Settings) -> int:
    """The offset the session's next chunk will have (0 for a session not started yet)."""
    try:
        status = await sessions.get_status(client, key, wait=settings.api.query_wait)
    except NotFound:
        return 0
    return sessions.stream_head(status)


async def message_project(request: Request, client: Client, caller: Caller, key: str) -> str | None:
    """The project of the session a scoped key's message goes to: its own, or (a new one) the key's
    only project; 422 for a key of several projects, which a message cannot name."""
    owner = await scope.check(client, owners(request), caller, WorkflowRef.session(key), may_start=True)
    if owner.exists:
        return owner.project
    try:
        return scope.project_to_start(caller, None)
    except ValueError as err:
        raise HTTPException(
            422,
            f"{err}: a message cannot name it, so start the session with `POST /sessions` and its `project`",
        ) from None


@router.get("/{key}", response_model=LiveSession)
async def get_session(
    key: SessionKey, client: ClientDep, settings: SettingsDep, caller: Viewer
) -> LiveSession:
    """Status, pending interactions and conversation of a session."""
    return await sessions.get_status(client, key, wait=settings.api.query_wait)


async def _check_attached(
    request: Request, store: ArtifactStore, caller: Caller, artifact_ids: list[str]
) -> None:
    """422 naming an attached artifact that does not exist, or (the same words) that `caller`'s
    key may not read: a session of its project would read it for the key."""
    for index, artifact_id in enumerate(artifact_ids):
        try:
            await asyncio.to_thread(store.info, artifact_id)
            if not await artifact_in_reach(request, caller, artifact_id):
                raise ArtifactNotFound(artifact_id)
        except ArtifactNotFound as err:
            raise RequestValidationError(
                [
                    {
                        "loc": ("body", "artifacts", index),
                        "msg": f"no artifact {artifact_id!r}",
                        "type": "not_found",
                    }
                ]
            ) from err


@router.get("/{key}/messages", response_model=MessagePage, responses=ERROR_RESPONSES(401, 403, 404, 422))
async def get_messages(
    key: SessionKey,
    client: ClientDep,
    settings: SettingsDep,
    store: ArtifactsDep,
    caller: Viewer,
    before: Annotated[int | None, Query(ge=0, description="Page back from this message index.")] = None,
    limit: Annotated[int, Query(ge=1, le=500, description="At most this many messages.")] = 50,
) -> MessagePage:
    """One page of the conversation, oldest first, however long ago it was said (older turns are
    archived as artifacts; `next_before` pages further back)."""
    window: MessageWindow = await WorkflowRef.session(key).query(
        client,
        SessionWorkflow.get_messages,
        MessagesQuery(before=before, limit=limit),
        wait=settings.api.query_wait,
    )
    end = window.total if before is None else min(before, window.total)
    start = max(0, end - limit)
    older = await archived_items(store, window.archive, start, min(end, window.start))
    messages = [UniversalMessage.model_validate(item) for item in older] + window.messages
    return MessagePage(
        session_key=key,
        total=window.total,
        start=start,
        messages=messages,
        next_before=start if start > 0 else None,
    )


@router.get("/{key}/audit", response_model=AuditTrail, responses=ERROR_RESPONSES(401, 403, 404, 422))
async def get_audit(
    key: SessionKey, client: ClientDep, settings: SettingsDep, store: ArtifactsDep, caller: Viewer
) -> AuditTrail:
    """Every decision and intervention, with who, where and when (archived entries included)."""
    wait = settings.api.query_wait
    session = WorkflowRef.session(key)
    kept: AuditTrail = await session.query(client, SessionWorkflow.get_audit, wait=wait)
    cursor: ArchiveCursor = await session.query(client, SessionWorkflow.get_archive, "audit", wait=wait)
    older = await archived_items(store, cursor, 0, cursor.archived)
    entries = [AuditEntry.model_validate(item) for item in older] + kept.entries
    return kept.model_copy(update={"entries": entries})


def _intervention(name: str, update: Any, summary: str) -> None:
    """Add `POST /sessions/{key}/<name>`: run the session's `<name>_checked` update as the caller."""

    async def intervene(
        key: SessionKey,
        client: ClientDep,
        settings: SettingsDep,
        caller: Operator,
        body: OptionalControl = None,
    ) -> LiveSession:
        control = control_of(body, caller, settings)
        return await sessions.intervene(client, key, update, control, within=settings.api.busy_retry_seconds)

    intervene.__doc__ = summary
    router.post(f"/{{key}}/{name}", response_model=LiveSession, responses=BUSY_RESPONSE, name=name)(intervene)


_intervention(
    "pause",
    SessionWorkflow.pause_checked,
    "Start nothing new until resumed (409 when already paused or closed).",
)
_intervention(
    "resume", SessionWorkflow.resume_checked, "Resume a paused session (409 when not paused or closed)."
)
_intervention(
    "cancel",
    SessionWorkflow.cancel_checked,
    "End the session; a pending approval is denied by `system:cancel` (409 when closed).",
)
_intervention(
    "turn/cancel",
    SessionWorkflow.cancel_turn_checked,
    "Cancel the running turn, not the session: what waits for a person is denied, a running step or "
    "tool is cancelled, the agent is told (409 when no turn runs).",
)
