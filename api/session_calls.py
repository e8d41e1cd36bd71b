"""Calls to session workflows: start, message (signal-with-start), query, update.

Used by the HTTP routes and the Lark channel alike. Problems are raised as `SessionCallError`s
that say what went wrong in words a person reads (no HTTP here): `api/errors.py` gives each kind
its status, the Lark channel turns it into a toast.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any, TypeVar

from temporalio.client import (
    Client,
    WorkflowExecutionStatus,
    WorkflowHandle,
    WorkflowUpdateFailedError,
    WorkflowUpdateRPCTimeoutOrCancelledError,
)
from temporalio.common import WorkflowIDConflictPolicy
from temporalio.exceptions import ApplicationError, WorkflowAlreadyStartedError
from temporalio.service import RPCError, RPCStatusCode

from contracts import InboundMessage, LiveSession, SessionConfig
from workflows.ids import session_workflow_id
from workflows.session import SessionWorkflow
from workflows.session.state import SessionRunInput

from .busy import retry_while_busy

T = TypeVar("T")

QUERY_WAIT = timedelta(seconds=10)
"""How long a query may wait for the session's worker: a healthy one answers in milliseconds, so
a session that says nothing for this long has no worker serving it (503, never a hung request)."""
BUSY_RETRY_SECONDS = 10.0
"""Default time a command Temporal refuses as busy is retried (`Settings.api.busy_retry_seconds`)."""

CLOSED_STATUS = {
    WorkflowExecutionStatus.COMPLETED: "completed",
    WorkflowExecutionStatus.CANCELED: "cancelled",
    WorkflowExecutionStatus.FAILED: "failed",
    WorkflowExecutionStatus.TERMINATED: "terminated",
    WorkflowExecutionStatus.TIMED_OUT: "timed out",
    WorkflowExecutionStatus.CONTINUED_AS_NEW: "continued",
}


class SessionCallError(Exception):
    """A session call that could not be done; `str(err)` says why."""


class SessionNotFound(SessionCallError):
    """No session with this key was ever started."""


class SessionExists(SessionCallError):
    """A session with this key is already running."""


class SessionClosed(SessionCallError):
    """The session has closed and takes no more commands."""


class NotAnswered(SessionCallError):
    """The session took no decision on the command in time (no worker, or a long task)."""


class Refused(SessionCallError):
    """The session refused the command (an update's validator); `error_type` says how."""

    def __init__(self, error_type: str | None, message: str) -> None:
        super().__init__(message)
        self.error_type = error_type


def is_not_found(err: RPCError) -> bool:
    """Whether an RPC error says the workflow does not exist (or is closed, for updates)."""
    return err.status == RPCStatusCode.NOT_FOUND


def is_timeout(err: RPCError) -> bool:
    """Whether an RPC ran out of its time (the client reports `CANCELLED: Timeout expired`)."""
    return err.status in (RPCStatusCode.CANCELLED, RPCStatusCode.DEADLINE_EXCEEDED)


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
    """Start a new session.

    Raises:
        SessionExists: One with the key is already running.
    """
    try:
        return await _start(client, task_queue, config, None)
    except WorkflowAlreadyStartedError as err:
        raise SessionExists(f"session {config.session_key!r} already exists and is running") from err


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


async def why_unavailable(client: Client, key: str) -> SessionCallError:
    """`SessionNotFound` for a session that never existed, `SessionClosed` for one that has closed."""
    try:
        description = await handle_for(client, key).describe()
    except RPCError as err:
        if is_not_found(err):
            return SessionNotFound(f"no session {key!r}")
        raise
    status = CLOSED_STATUS.get(description.status) if description.status else None
    return SessionClosed(f"session {key!r} is {status or 'closed'}; it takes no more commands")


async def query(client: Client, key: str, query: Any, *args: Any, wait: timedelta = QUERY_WAIT) -> Any:
    """Run one of the session's queries (also on closed sessions), waiting at most `wait`.

    Raises:
        SessionNotFound: No session has this key.
        NotAnswered: The session did not answer within `wait` (no worker serves it).
    """
    try:
        return await handle_for(client, key).query(query, *args, rpc_timeout=wait)
    except RPCError as err:
        if is_not_found(err):
            raise SessionNotFound(f"no session {key!r}") from err
        if is_timeout(err):
            raise NotAnswered(
                f"session {key!r} did not answer within {wait.total_seconds():g} s: no worker "
                "is serving it right now (is `synapse worker` running on its task queue?)"
            ) from err
        raise


async def get_status(client: Client, key: str, *, wait: timedelta = QUERY_WAIT) -> LiveSession:
    """The session's LiveSession (also for closed sessions).

    Raises:
        SessionNotFound: No session has this key.
        NotAnswered: No worker answered within `wait`.
    """
    status: LiveSession = await query(client, key, SessionWorkflow.get_status, wait=wait)
    return status


async def run_update(
    client: Client,
    key: str,
    call: Callable[[WorkflowHandle[Any, Any]], Awaitable[T]],
    *,
    within: float = BUSY_RETRY_SECONDS,
) -> T:
    """Run `call(handle)` (an update), retrying while Temporal is busy for `within` seconds.

    Raises:
        Refused: The session's validator rejected it (its `ApplicationError.type` tells why).
        SessionNotFound, SessionClosed: There is no running session to take it.
        RPCError: Temporal stayed busy (`api.busy.is_busy`) or failed otherwise.
    """
    handle = handle_for(client, key)
    try:
        return await retry_while_busy(lambda: call(handle), within=within)
    except WorkflowUpdateRPCTimeoutOrCancelledError as err:
        raise NotAnswered(
            f"session {key!r} did not answer in time (is a worker running?); the command was not "
            f"confirmed: check GET /sessions/{key} before repeating it"
        ) from err
    except WorkflowUpdateFailedError as err:
        cause = err.cause
        if isinstance(cause, ApplicationError):
            raise Refused(cause.type, cause.message) from err
        raise Refused(None, f"the workflow failed the request: {cause}") from err
    except RPCError as err:
        if is_not_found(err):
            raise await why_unavailable(client, key) from err
        raise
