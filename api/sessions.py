"""Reaching session workflows from the API: start, signal-with-start, query, update."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any

from fastapi import HTTPException
from temporalio.client import (
    Client,
    WorkflowExecutionStatus,
    WorkflowHandle,
    WorkflowUpdateFailedError,
)
from temporalio.common import WorkflowIDConflictPolicy
from temporalio.exceptions import WorkflowAlreadyStartedError
from temporalio.service import RPCError

from contracts import InboundMessage, LiveSession, SessionConfig
from workflows.ids import session_workflow_id
from workflows.session import SessionWorkflow
from workflows.session.state import SessionRunInput

from .busy import retry_while_busy
from .errors import from_update_failure, is_not_found

BUSY_RETRY_SECONDS = 10.0
"""Default time a command Temporal refuses as busy is retried (`Settings.busy_retry_seconds`)."""

CLOSED_STATUS = {
    WorkflowExecutionStatus.COMPLETED: "completed",
    WorkflowExecutionStatus.CANCELED: "cancelled",
    WorkflowExecutionStatus.FAILED: "failed",
    WorkflowExecutionStatus.TERMINATED: "terminated",
    WorkflowExecutionStatus.TIMED_OUT: "timed out",
    WorkflowExecutionStatus.CONTINUED_AS_NEW: "continued",
}


def _start(
    client: Client, task_queue: str, config: SessionConfig, message: InboundMessage | None
) -> Awaitable[WorkflowHandle[Any, Any]]:
    signal: dict[str, Any] = (
        {"start_signal": "submit_message", "start_signal_args": [message]} if message is not None else {}
    )
    return client.start_workflow(
        SessionWorkflow.run,
        SessionRunInput(config=config),
        id=session_workflow_id(config.session_key),
        task_queue=task_queue,
        id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING
        if message
        else WorkflowIDConflictPolicy.FAIL,
        static_summary=f"Session {config.session_key} with {config.agent_id} ({config.channel})",
        **signal,
    )


async def start_session(client: Client, task_queue: str, config: SessionConfig) -> WorkflowHandle[Any, Any]:
    """Start a new session; 409 when one with the key is already running."""
    try:
        return await _start(client, task_queue, config, None)
    except WorkflowAlreadyStartedError as err:
        raise HTTPException(409, f"session {config.session_key!r} already exists and is running") from err


async def send_message(
    client: Client,
    task_queue: str,
    config: SessionConfig,
    message: InboundMessage,
    *,
    within: float = BUSY_RETRY_SECONDS,
) -> WorkflowHandle[Any, Any]:
    """Deliver a message by signal-with-start: the first message of a chat creates its session.

    Retried for `within` seconds while Temporal is busy; then the refusal is raised (503).
    """
    return await retry_while_busy(lambda: _start(client, task_queue, config, message), within=within)


def handle_for(client: Client, key: str) -> WorkflowHandle[Any, Any]:
    """Handle of the session's latest run."""
    return client.get_workflow_handle(session_workflow_id(key))


async def not_found_or_closed(client: Client, key: str) -> HTTPException:
    """404 for a session that never existed, 409 for one that has closed."""
    try:
        description = await handle_for(client, key).describe()
    except RPCError as err:
        if is_not_found(err):
            return HTTPException(404, f"no session {key!r}")
        raise
    status = CLOSED_STATUS.get(description.status) if description.status else None
    return HTTPException(409, f"session {key!r} is {status or 'closed'}; it takes no more commands")


async def get_status(client: Client, key: str) -> LiveSession:
    """The session's LiveSession (also for closed sessions); 404 when unknown."""
    try:
        return await handle_for(client, key).query(SessionWorkflow.get_status)
    except RPCError as err:
        if is_not_found(err):
            raise HTTPException(404, f"no session {key!r}") from err
        raise


async def run_update(client: Client, key: str, call: Any, *, within: float = BUSY_RETRY_SECONDS) -> Any:
    """Run `call(handle)` (an update), mapping rejections and unknown/closed sessions to HTTP errors.

    While the session has no update slot free (or Temporal is otherwise busy) the call is retried
    with backoff for `within` seconds; then the refusal is raised (the app answers 503).
    """
    handle = handle_for(client, key)
    try:
        return await retry_while_busy(lambda: call(handle), within=within)
    except WorkflowUpdateFailedError as err:
        raise from_update_failure(err) from err
    except RPCError as err:
        if is_not_found(err):
            raise await not_found_or_closed(client, key) from err
        raise
