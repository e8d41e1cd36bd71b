"""Calls to session workflows: start, message (signal-with-start), status, updates.

Used by the HTTP routes and the Lark channel alike; built on `workflow.py`, whose errors
(`errors.py`) they raise.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any, TypeVar

from temporalio.client import Client, WorkflowHandle
from temporalio.common import WorkflowIDConflictPolicy
from temporalio.exceptions import WorkflowAlreadyStartedError

from contracts import InboundMessage, LiveSession, SessionConfig
from contracts.names import SUBMIT_MESSAGE
from workflows.identity.ids import session_workflow_id
from workflows.session import SessionWorkflow
from workflows.session.state import SessionRunInput

from . import workflow
from .busy import retry_while_busy
from .errors import AlreadyExists
from .workflow import BUSY_RETRY_SECONDS, QUERY_WAIT

T = TypeVar("T")


def name_of(key: str) -> str:
    """How messages name the session."""
    return f"session {key!r}"


def _start(
    client: Client, task_queue: str, config: SessionConfig, message: InboundMessage | None
) -> Awaitable[WorkflowHandle[Any, Any]]:
    signal: dict[str, Any] = (
        {"start_signal": SUBMIT_MESSAGE, "start_signal_args": [message]} if message is not None else {}
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


def check_with(key: str) -> str:
    """The read that shows whether an unanswered command to the session was applied."""
    return f"GET /sessions/{key}"


def handle_for(client: Client, key: str) -> WorkflowHandle[Any, Any]:
    """Handle of the session's latest run."""
    return client.get_workflow_handle(session_workflow_id(key))


async def query(client: Client, key: str, query: Any, *args: Any, wait: timedelta = QUERY_WAIT) -> Any:
    """Run one of the session's queries (also on closed sessions); see `workflow.query`."""
    return await workflow.query(client, session_workflow_id(key), name_of(key), query, *args, wait=wait)


async def get_status(client: Client, key: str, *, wait: timedelta = QUERY_WAIT) -> LiveSession:
    """The session's LiveSession (also for closed sessions).

    Raises:
        NotFound: No session has this key.
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
    """Run an update on the session; see `workflow.run_update`."""
    return await workflow.run_update(
        client, session_workflow_id(key), name_of(key), call, within=within, check_with=check_with(key)
    )
