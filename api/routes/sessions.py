"""Session routes: create, send messages, read status and audit, pause/resume/cancel."""

from __future__ import annotations

import uuid
from typing import Annotated, Any

from fastapi import APIRouter, Body, Path

from contracts import (
    AuditTrail,
    CreateSessionRequest,
    InboundMessage,
    LiveSession,
    MessageAccepted,
    MessageRequest,
    SessionConfig,
    SessionControl,
)
from contracts.session import SESSION_KEY_PATTERN
from core.agent_registry import DEFAULT_AGENT
from workflows.ids import session_workflow_id
from workflows.session import SessionWorkflow

from .. import session_calls
from ..deps import ClientDep, Operator, RegistryDep, SettingsDep, Viewer
from ..errors import BUSY_RESPONSE

router = APIRouter(prefix="/sessions", tags=["sessions"])

SessionKey = Annotated[str, Path(pattern=SESSION_KEY_PATTERN, description="The session key.")]
OptionalControl = Annotated[SessionControl | None, Body()]


@router.post("", status_code=201, response_model=LiveSession)
async def create_session(
    body: CreateSessionRequest,
    client: ClientDep,
    settings: SettingsDep,
    registry: RegistryDep,
    caller: Operator,
) -> LiveSession:
    """Start a session explicitly (a first message would also start one); 422 for an unknown agent."""
    key = body.session_key or uuid.uuid4().hex[:12]
    config = SessionConfig(
        session_key=key,
        agent=registry.resolve(body.agent_id or DEFAULT_AGENT, key),
        **body.model_dump(exclude={"session_key"}, exclude_none=True),
    )
    await session_calls.start_session(client, settings.temporal.task_queue, config)
    return await session_calls.get_status(client, config.session_key)


@router.post("/{key}/messages", status_code=202, response_model=MessageAccepted, responses=BUSY_RESPONSE)
async def post_message(
    key: SessionKey,
    body: MessageRequest,
    client: ClientDep,
    settings: SettingsDep,
    registry: RegistryDep,
    caller: Operator,
) -> MessageAccepted:
    """Send a message to the session's agent; starts the session when needed."""
    message = InboundMessage(
        channel="http",
        sender_id=caller.principal or body.principal or "anonymous",
        chat_id=key,
        content=body.content,
    )
    config = SessionConfig(session_key=key, agent=registry.resolve(DEFAULT_AGENT, key))
    await session_calls.send_message(
        client, settings.temporal.task_queue, config, message, within=settings.api.busy_retry_seconds
    )
    return MessageAccepted(session_key=key, workflow_id=session_workflow_id(key))


@router.get("/{key}", response_model=LiveSession)
async def get_session(key: SessionKey, client: ClientDep, caller: Viewer) -> LiveSession:
    """Status, pending interactions and conversation of a session."""
    return await session_calls.get_status(client, key)


@router.get("/{key}/audit", response_model=AuditTrail)
async def get_audit(key: SessionKey, client: ClientDep, caller: Viewer) -> AuditTrail:
    """Every decision and intervention, with who, where and when."""
    await session_calls.get_status(client, key)  # 404 for unknown sessions
    result: AuditTrail = await session_calls.handle_for(client, key).query(SessionWorkflow.get_audit)
    return result


def _intervention(name: str, update: Any, summary: str) -> None:
    """Add `POST /sessions/{key}/<name>`: run the session's `<name>_checked` update as the caller."""

    async def intervene(
        key: SessionKey,
        client: ClientDep,
        settings: SettingsDep,
        caller: Operator,
        body: OptionalControl = None,
    ) -> LiveSession:
        control = body or SessionControl()
        control = control.model_copy(update={"principal": caller.principal or control.principal})
        result: LiveSession = await session_calls.run_update(
            client,
            key,
            lambda handle: handle.execute_update(update, control),
            within=settings.api.busy_retry_seconds,
        )
        return result

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
