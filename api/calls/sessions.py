"""Calls to session workflows: start, message (signal-with-start), status, audit, updates.

Used by the HTTP routes and the chat channels alike; built on `WorkflowRef.session` (`ref.py`),
whose errors (`errors.py`) they raise.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from temporalio.client import Client, WorkflowExecutionStatus, WorkflowHandle
from temporalio.common import WorkflowIDConflictPolicy, WorkflowIDReusePolicy
from temporalio.exceptions import WorkflowAlreadyStartedError
from temporalio.service import RPCError

from contracts import (
    CHAT_CHANNEL_NAMES,
    AgentSpec,
    AuditEntry,
    AuditKind,
    AuditTrail,
    Grant,
    GrantRevocation,
    InboundMessage,
    LiveSession,
    SessionConfig,
    SessionControl,
    SessionStatus,
)
from contracts.names import SUBMIT_MESSAGE
from core.agent_registry import agent_ref
from core.settings import Settings
from core.times import utc_text
from workflows.identity import search_attributes
from workflows.identity.ids import session_workflow_id
from workflows.session import SessionWorkflow
from workflows.session.state import HISTORY_EVENTS_KEPT, SessionRunInput
from workflows.session.view import start_search_attributes
from workflows.versioning import GENERATION

from . import ended, endings, workflow
from .busy import retry_while_busy
from .errors import AlreadyExists, CallError, Cancelled, NotFound
from .ref import WorkflowRef
from .workflow import BUSY_RETRY_SECONDS, CLOSED_STATUS, QUERY_WAIT


def chat_of(key: str) -> str | None:
    """The chat channel a session key belongs to (`Lark`, `DingTalk`: `lark:...`, `dingtalk:...`,
    `contracts.CHAT_CHANNEL_NAMES`), or None. Its chats start those sessions (with the chat's
    approvers and settings), never a call of the API."""
    prefix, colon, _ = key.partition(":")
    channel = CHAT_CHANNEL_NAMES.get(prefix) if colon else None
    return channel.title if channel else None


async def send_to_running(
    client: Client, key: str, message: InboundMessage, *, within: float = BUSY_RETRY_SECONDS
) -> None:
    """Signal a message to a session that runs, never starting one (a chat's session).

    Raises:
        NotFound: No run of the session is going (its chat starts it).
    """
    session = WorkflowRef.session(key)
    handle = session.handle(client)
    try:
        await retry_while_busy(lambda: handle.signal(SUBMIT_MESSAGE, message), within=within)
    except RPCError as err:
        if workflow.is_not_found(err):
            raise NotFound(
                f"{session.name} is not running; a {chat_of(key) or 'chat'} session is started by its chat "
                "(a message over HTTP only joins one that runs)"
            ) from err
        raise


def new_config(settings: Settings, key: str, agent: AgentSpec, **fields: Any) -> SessionConfig:
    """The config of a session the API starts: the deployment's approval timeout
    (`SYNAPSE_APPROVAL_TIMEOUT_SECONDS`) unless `fields` bring the session's own, and the inline
    size its graphs' task inputs go by reference above (`SYNAPSE_INLINE_BYTES`). The agent goes by
    reference (`AgentRef`): the workers' registry holds its declaration."""
    fields.setdefault("approval_timeout_seconds", settings.api.approval_timeout_seconds)
    fields.setdefault("inline_input_bytes", settings.limits.inline_bytes)
    return SessionConfig(session_key=key, agent_ref=agent_ref(agent), **fields)


def _start(
    client: Client,
    task_queue: str,
    config: SessionConfig,
    message: InboundMessage | None,
    reuse: WorkflowIDReusePolicy = WorkflowIDReusePolicy.ALLOW_DUPLICATE,
) -> Awaitable[WorkflowHandle[Any, Any]]:
    signal: dict[str, Any] = (
        {"start_signal": SUBMIT_MESSAGE, "start_signal_args": [message]} if message is not None else {}
    )
    return client.start_workflow(
        SessionWorkflow.run,
        SessionRunInput(
            config=config, generation=GENERATION, history_events_before_continue_as_new=HISTORY_EVENTS_KEPT
        ),
        id=session_workflow_id(config.session_key),
        task_queue=task_queue,
        id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING
        if message
        else WorkflowIDConflictPolicy.FAIL,
        id_reuse_policy=reuse,
        static_summary=f"Session {config.session_key} with {config.agent_id} ({config.channel})",
        search_attributes=start_search_attributes(config),
        **signal,
    )


async def start_session(client: Client, task_queue: str, config: SessionConfig) -> WorkflowHandle[Any, Any]:
    """Start a new session.

    Raises:
        AlreadyExists: One with the key is already running.
    """
    try:
        return await _start(client, task_queue, config, None)
    except WorkflowAlreadyStartedError as err:
        raise AlreadyExists(f"session {config.session_key!r} already exists and is running") from err


async def send_message(
    client: Client,
    task_queue: str,
    config: SessionConfig,
    message: InboundMessage,
    *,
    within: float = BUSY_RETRY_SECONDS,
) -> WorkflowHandle[Any, Any]:
    """Deliver a message by signal-with-start: the first message of a chat creates its session.

    Retried for `within` seconds while Temporal is busy; then the refusal is raised.
    """
    return await retry_while_busy(lambda: _start(client, task_queue, config, message), within=within)


@dataclass(frozen=True)
class Delivery:
    """What became of a message `deliver_once` sent."""

    previous: EndedRun | None = None
    """How the session's last run ended, when this message started it again."""
    cancelled: EndedRun | None = None
    """The session was cancelled: the message was not delivered (its run has closed), or the run,
    still closing, drops it. Nothing will answer it."""


async def deliver_once(
    client: Client,
    task_queue: str,
    config: SessionConfig,
    message: InboundMessage,
    *,
    within: float = BUSY_RETRY_SECONDS,
) -> Delivery:
    """Deliver a message as `send_message` does, but never start a cancelled session again.

    A new session's first message costs one call: a signal-with-start that refuses to start over
    a closed run. Only then is the closed run read (`ended_run`) before it starts again. A message
    signalled to a running session is followed by a read of how it runs, since one that was
    cancelled and is still closing drops what it is sent. A cancel that lands while the message is
    on its way is seen or not, as with any check before sending; a read that fails after the
    message went out leaves it delivered, never a refusal that would make the caller send it
    again. A run started again works in the project of the run before, unless `config` names one.
    """
    key = config.session_key
    previous = None
    try:
        handle = await retry_while_busy(
            lambda: _start(client, task_queue, config, message, WorkflowIDReusePolicy.REJECT_DUPLICATE),
            within=within,
        )
    except WorkflowAlreadyStartedError:  # its last run has closed
        previous = await ended_run(client, key)
        if previous is not None and previous.cancelled:
            return Delivery(cancelled=previous)
        if previous is not None and config.project is None:  # the new conversation stays in its project
            config = config.model_copy(update={"project": previous.project})
        handle = await send_message(client, task_queue, config, message, within=within)
    if not started_by(handle):
        try:
            running = await ended_run(client, key)
        except RPCError:  # the message is delivered: not knowing more is no reason to refuse it
            running = None
        if running is not None and running.cancelled:
            return Delivery(previous, cancelled=running)
    return Delivery(previous)


async def deliver(
    client: Client,
    task_queue: str,
    config: SessionConfig,
    message: InboundMessage,
    *,
    within: float = BUSY_RETRY_SECONDS,
    wait: timedelta = QUERY_WAIT,
) -> EndedRun | None:
    """Deliver a message as `deliver_once` does, refusing it when the session was cancelled; None,
    or how the session's last run ended when this message started it again.

    Raises:
        Cancelled: The session was cancelled (closed, or still closing); it will not answer.
    """
    delivery = await deliver_once(client, task_queue, config, message, within=within)
    if delivery.cancelled is not None:
        raise await cancellation(client, config.session_key, delivery.cancelled, wait=wait)
    return delivery.previous


def started_by(handle: WorkflowHandle[Any, Any]) -> bool:
    """Whether the signal-with-start that gave `handle` started a run (False: it signalled one).

    The SDK keeps the server's answer, which says so, on the handle but does not publish it; without
    it this answers False, and `deliver` reads the session's status as for a running one.
    """
    response = getattr(handle, "_start_workflow_response", None)
    return bool(getattr(response, "started", False))


@dataclass(frozen=True)
class EndedRun:
    """How the latest run of a session ended (it runs no more)."""

    status: str
    """`cancelled`, `completed` (after being idle), `failed`, `terminated` or `timed out`."""
    closed_at: datetime | None
    """None: cancelled, and still closing (a message signalled to it now would be dropped, and one
    sent once it has closed would start it again)."""
    reason: str | None = None
    """How Temporal ended it, when it did (terminated, timed out, failed: `endings`)."""
    project: str | None = None
    """The project it worked in (its `SynapseProject`): a new conversation goes on in it."""

    @property
    def cancelled(self) -> bool:
        """Whether someone cancelled it (the session's `cancel`, or a Temporal cancellation)."""
        return self.status == SessionStatus.CANCELLED


_HAD = {SessionStatus.COMPLETED: "completed after being idle", "terminated": "been terminated"}
"""How a restart note words an ended run's status (others as they are: failed, timed out)."""


def when(moment: datetime | None) -> str:
    """`at 2025-01-02 10:02:03 UTC`, as the refusals and notes here word a moment."""
    return f"at {utc_text(moment)}" if moment else "at an unknown time"


async def ended_run(client: Client, key: str) -> EndedRun | None:
    """How the session's latest run ended; None while it runs, or when no session has the key. A
    cancelled run still closing counts as ended: it takes no more messages.

    Asks the server, not a worker: a session closes completed both when cancelled and when idle,
    and its `SynapseStatus` search attribute says which.
    """
    try:
        description = await WorkflowRef.session(key).handle(client).describe()
    except RPCError as err:
        if workflow.is_not_found(err):
            return None
        raise
    shown = description.typed_search_attributes
    if description.status in (None, WorkflowExecutionStatus.RUNNING):
        if shown.get(search_attributes.STATUS) == SessionStatus.CANCELLED:
            return EndedRun(SessionStatus.CANCELLED, None)  # cancelled, still closing (deliveries drain)
        return None
    if description.status == WorkflowExecutionStatus.COMPLETED:
        status = shown.get(search_attributes.STATUS) or SessionStatus.COMPLETED
        return EndedRun(status, description.close_time, project=shown.get(search_attributes.PROJECT))
    status = CLOSED_STATUS.get(description.status, "closed")
    ending = await endings.ending_of(client, description.id, description.run_id)
    return EndedRun(
        status,
        description.close_time,
        ending.reason if ending else None,
        project=shown.get(search_attributes.PROJECT),
    )


async def cancellation(
    client: Client, key: str, ended: EndedRun, *, wait: timedelta = QUERY_WAIT
) -> Cancelled:
    """The refusal of a message to a cancelled session: who cancelled it, when and why (from its
    audit trail; without a worker to read that, only when), and what to do instead."""
    by, at, reason = None, ended.closed_at, None
    try:
        entry = await audit_entry(client, key, lambda e: e.kind == AuditKind.CANCELLED, wait=wait)
    except CallError:
        entry = None
    if entry is not None:
        by, at, reason = entry.principal, entry.at, entry.comment
    who = f" by {by}" if by else ""
    why = f" ({reason})" if reason else ""
    start = json.dumps({"session_key": key})
    return Cancelled(
        f"{WorkflowRef.session(key).name} was cancelled{who} {when(at)}{why}; a cancelled session takes "
        f"no more messages. Use another session key, or start this one again as a new conversation with "
        f"POST /sessions {start}",
        by=by,
        at=at,
        reason=reason,
    )


async def accepting(client: Client, key: str, *, wait: timedelta = QUERY_WAIT) -> EndedRun | None:
    """Check that a message may go to the session: None when it runs (or is new), how its last run
    ended when the message will start it again.

    A cancel that lands between this check and the message's signal-with-start is not seen here.

    Raises:
        Cancelled: It was cancelled; a message does not start it again.
    """
    ended = await ended_run(client, key)
    if ended is not None and ended.cancelled:
        raise await cancellation(client, key, ended, wait=wait)
    return ended


async def closed(client: Client, key: str, *, within: float) -> None:
    """Wait (at most `within` seconds) for the session's latest run to close, however it ends."""
    with contextlib.suppress(Exception):  # its outcome does not matter here, only that it closed
        await asyncio.wait_for(WorkflowRef.session(key).handle(client).result(follow_runs=False), within)


def restart_note(key: str, ended: EndedRun) -> str:
    """What a message that started the session again is told about the run before."""
    had = _HAD.get(ended.status, ended.status)
    how = f" ({ended.reason})" if ended.reason else ""
    return (
        f"{WorkflowRef.session(key).name} had {had} {when(ended.closed_at)}{how}; this message started it "
        "again as a new conversation (the agent does not see the earlier messages)"
    )


async def audit_entry(
    client: Client, key: str, matches: Callable[[AuditEntry], bool], *, wait: timedelta = QUERY_WAIT
) -> AuditEntry | None:
    """The latest entry of the session's audit trail that `matches` (None when none does).

    Raises:
        NotFound: No session has this key.
        NotAnswered: No worker answered within `wait`.
    """
    trail: AuditTrail = await WorkflowRef.session(key).query(client, SessionWorkflow.get_audit, wait=wait)
    return next((e for e in reversed(trail.entries) if matches(e)), None)


CLOSED = (
    SessionStatus.CANCELLED,
    SessionStatus.COMPLETED,
    SessionStatus.FAILED,
    SessionStatus.TERMINATED,
    SessionStatus.TIMED_OUT,
)
"""A session in one of these runs no more: a message starts a new run, whose stream begins at 0."""


def stream_head(status: LiveSession | None) -> int:
    """The offset the session's next chunk will have: 0 for a session not started yet (None), or
    one that runs no more (a message starts a new run, whose stream begins at 0)."""
    return 0 if status is None or status.status in CLOSED else status.next_offset


async def get_status(client: Client, key: str, *, wait: timedelta = QUERY_WAIT) -> LiveSession:
    """The session's LiveSession (also for closed sessions; as it ended when Temporal ended it:
    `ended.session`).

    Raises:
        NotFound: No session has this key.
        NotAnswered: No worker answered within `wait`.
    """
    found, ending = await WorkflowRef.session(key).read(client, SessionWorkflow.get_status, wait=wait)
    return ended.session(found, ending)


async def intervene(
    client: Client, key: str, update: Any, control: SessionControl, *, within: float = BUSY_RETRY_SECONDS
) -> LiveSession:
    """Run one of the session's control updates (`SessionWorkflow.pause_checked`, `resume_checked`,
    `cancel_checked`, `cancel_turn_checked`) as `control.principal`: the session after it."""
    return await WorkflowRef.session(key).run_update(client, update, control, LiveSession, within=within)


async def revoke_grant(
    client: Client, key: str, revocation: GrantRevocation, *, within: float = BUSY_RETRY_SECONDS
) -> Grant:
    """Revoke one of the session's grants (audited): the grant as it is now."""
    return await WorkflowRef.session(key).run_update(
        client, SessionWorkflow.revoke_grant, revocation, Grant, within=within
    )
