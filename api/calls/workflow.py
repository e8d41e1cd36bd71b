"""Calls to any Synapse workflow (a session, a graph, a task run): queries, and updates' failures.

Problems are raised as `CallError`s (`errors.py`) that say what went wrong in words a person
reads; each call names its workflow for those words (`"session 'abc'"`, `"graph '0b1…'"`).
"""

from __future__ import annotations

import asyncio
import base64
import re
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta
from typing import Any

from temporalio.client import (
    Client,
    WorkflowExecutionStatus,
    WorkflowHandle,
    WorkflowQueryFailedError,
    WorkflowQueryRejectedError,
    WorkflowUpdateFailedError,
    WorkflowUpdateRPCTimeoutOrCancelledError,
)
from temporalio.common import QueryRejectCondition
from temporalio.exceptions import ApplicationError
from temporalio.service import RPCError, RPCStatusCode

from . import endings
from .errors import CallError, Closed, Invalid, NotAnswered, NotFound, Problem, Refused
from .unanswered import why_unanswered


def update_id() -> str:
    """A new update's id: 16 base32 characters of a uuid4 (80 random bits; a workflow's updates
    need ids unique within it, nothing reads their form). The SDK's default, a whole UUID, is
    written three or four times into a history per update (issue 51's bytes)."""
    return base64.b32encode(uuid.uuid4().bytes[:10]).decode().lower()


QUERY_WAIT = timedelta(seconds=10)
"""How long a query may wait for the workflow's worker: a healthy one answers in milliseconds, so
a workflow that says nothing for this long has no worker serving it (`NotAnswered`, never a hung
request)."""
QUERY_ATTEMPT = timedelta(seconds=5)
"""How long the first attempt of a query waits (each next one waits twice as long, within
`QUERY_WAIT`): a query a worker dropped is asked again instead of costing the whole wait. Longer
than the SDK's own 2 s limit on a workflow's thread, so a query it interrupts (`TMPRL1101`) is
answered by that failure within the first attempt."""
MIN_ATTEMPT_SECONDS = 0.05
"""Less time than this left of the wait is not worth another attempt."""
UPDATE_WAIT = timedelta(seconds=20)
"""How long a control update (pause, rollback, a blueprint change...) may wait for its workflow's
worker: past it the caller is told it was not confirmed (`NotAnswered`), instead of waiting for as
long as no worker runs. A graph replaying a long history after a worker restart takes seconds."""
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


def is_not_found(err: RPCError) -> bool:
    """Whether an RPC error says the workflow does not exist (or is closed, for updates)."""
    return err.status == RPCStatusCode.NOT_FOUND


def is_timeout(err: RPCError) -> bool:
    """Whether an RPC ran out of its time (the client reports `CANCELLED: Timeout expired`)."""
    return err.status in (RPCStatusCode.CANCELLED, RPCStatusCode.DEADLINE_EXCEEDED)


def is_no_worker(err: RPCError) -> bool:
    """Whether Temporal says no worker has polled the workflow's task queue lately (its workers
    stopped some seconds ago; until then a query only runs out of time)."""
    return err.status == RPCStatusCode.FAILED_PRECONDITION and "no poller seen" in err.message


async def why_unavailable(client: Client, workflow_id: str, name: str) -> CallError:
    """`NotFound` for a workflow that never existed, `Closed` for one that has closed."""
    try:
        description = await client.get_workflow_handle(workflow_id).describe()
    except RPCError as err:
        if is_not_found(err):
            return NotFound(f"no {name}")
        raise
    if description.status in endings.ENDED_AS:
        ending = await endings.ending_of(client, workflow_id, description.run_id)
        if ending is not None:
            return Closed(
                f"{name} {ending.words()}; it takes no more commands, and what it asked is withdrawn"
            )
    status = CLOSED_STATUS.get(description.status) if description.status else None
    return Closed(f"{name} is {status or 'closed'}; it takes no more commands")


async def ask(
    handle: WorkflowHandle[Any, Any],
    query: Any,
    *args: Any,
    wait: timedelta = QUERY_WAIT,
    result_type: type | None = None,
    reject_condition: QueryRejectCondition | None = None,
) -> Any:
    """`handle.query(...)`, spending at most `wait` in attempts (`QUERY_ATTEMPT`, doubling).

    A worker can drop a query that reaches it while it takes the workflow out of its cache (a run
    that just closed, or made room for others), and Temporal then waits for that answer until the
    caller gives up; asked again, the worker answers at once.

    Raises:
        RPCError: As `handle.query`; a timeout once `wait` is spent.
    """
    deadline = time.monotonic() + wait.total_seconds()
    attempt = QUERY_ATTEMPT.total_seconds()
    while True:
        left = deadline - time.monotonic()
        try:
            return await handle.query(
                query,
                *args,
                result_type=result_type,
                rpc_timeout=timedelta(seconds=max(min(attempt, left), MIN_ATTEMPT_SECONDS)),
                reject_condition=reject_condition,
            )
        except RPCError as err:
            if not (is_timeout(err) and deadline - time.monotonic() > MIN_ATTEMPT_SECONDS):
                raise
        attempt *= 2


async def query(
    client: Client,
    workflow_id: str,
    name: str,
    query: Any,
    *args: Any,
    wait: timedelta = QUERY_WAIT,
    reject_condition: QueryRejectCondition | None = None,
) -> Any:
    """Run one of the workflow's queries (also on closed workflows), waiting at most `wait` (in
    attempts: `ask`).

    Raises:
        WorkflowQueryRejectedError: The workflow's state met `reject_condition` (`endings.read`).
        NotFound: No such workflow.
        NotAnswered: It did not answer within `wait` (saying what kept it: `unanswered`), or Temporal
            says no worker serves it, or its worker interrupted it for holding the thread too long
            (`TMPRL1101`).
    """
    try:
        return await ask(
            client.get_workflow_handle(workflow_id),
            query,
            *args,
            wait=wait,
            reject_condition=reject_condition,
        )
    except WorkflowQueryFailedError as err:
        if "TMPRL1101" in err.message:
            raise NotAnswered(
                f"{name} could not answer: its worker interrupted it for running too long without "
                f"yielding ({err.message}); if it stays unanswered, restart that worker"
            ) from err
        raise
    except RPCError as err:
        if is_not_found(err):
            raise NotFound(f"no {name}") from err
        if is_timeout(err):
            why = await why_unanswered(client, workflow_id)
            raise NotAnswered(f"{name} did not answer within {wait.total_seconds():g} s: {why}") from err
        if is_no_worker(err):
            raise NotAnswered(
                f"{name} could not answer: {await why_unanswered(client, workflow_id)}"
            ) from err
        raise


async def read(
    client: Client, workflow_id: str, name: str, asked: Any, *args: Any, wait: timedelta
) -> tuple[Any, endings.Ending | None]:
    """The query's answer (see `query`), and how the workflow ended when Temporal ended it while it
    ran (None: it runs, or it completed by itself).

    At no cost on the usual read: the query asks Temporal to reject it unless the workflow is open
    or completed cleanly (`QueryRejectCondition.NOT_COMPLETED_CLEANLY`, checked by the server,
    which answers with the status); only a rejected one is queried again, together with its close
    event (`endings.ending_of`)."""
    try:
        found = await query(
            client,
            workflow_id,
            name,
            asked,
            *args,
            wait=wait,
            reject_condition=QueryRejectCondition.NOT_COMPLETED_CLEANLY,
        )
        return found, None
    except WorkflowQueryRejectedError as rejected:
        closed_as = rejected.status
    if closed_as not in endings.ENDED_AS:
        return await query(client, workflow_id, name, asked, *args, wait=wait), None
    return await asyncio.gather(
        query(client, workflow_id, name, asked, *args, wait=wait), endings.ending_of(client, workflow_id)
    )


UNDECODABLE = "Failed decoding arguments"
"""How the SDK fails an update whose argument its worker cannot decode (a `RuntimeError`)."""


def undecodable(cause: BaseException | None) -> bool:
    """Whether an update failed because the worker could not decode its argument (nested past what
    its JSON parser reads, or a model the worker's code does not take): the input's fault."""
    return (
        isinstance(cause, ApplicationError) and cause.type == "RuntimeError" and cause.message == UNDECODABLE
    )


def decoding_reason(cause: BaseException) -> str:
    """The decoder's own words, from the innermost cause of an `undecodable` failure."""
    while cause.__cause__ is not None:
        cause = cause.__cause__
    words = cause.message if isinstance(cause, ApplicationError) else str(cause)
    lines = [re.sub(r"\s*\[type=.*", "", line.strip()) for line in words.splitlines()[:2] if line.strip()]
    return "; ".join(lines) or UNDECODABLE


@asynccontextmanager
async def update_errors(
    client: Client, workflow_id: str, name: str, *, check_with: str | None = None
) -> AsyncIterator[None]:
    """Temporal's failures of an update on the workflow (sent or followed inside), as `CallError`s.

    Raises:
        Refused: The workflow's validator (or handler) rejected it (`ApplicationError.type` says why).
        Invalid: The workflow's worker could not decode it (`undecodable`): bad input, a 422.
        NotFound, Closed: There is no running workflow to take it.
        NotAnswered: It was not answered in time, saying what kept it (`unanswered`; `check_with`,
            when given, is the read to check); a worker may still apply it (Temporal keeps it for
            the next worker a while).
    """
    try:
        yield
    except WorkflowUpdateRPCTimeoutOrCancelledError as err:
        check = f": check {check_with} before repeating it" if check_with else ""
        why = await why_unanswered(client, workflow_id)
        raise NotAnswered(
            f"{name} did not answer in time: {why}; the command was not confirmed{check}"
        ) from err
    except WorkflowUpdateFailedError as err:
        cause = err.cause
        if undecodable(cause):
            raise Invalid(
                [Problem((), f"{name} could not read it: {decoding_reason(cause)}", "undecodable")]
            ) from err
        if isinstance(cause, ApplicationError):
            raise Refused(cause.type, cause.message, tuple(cause.details)) from err
        raise Refused(None, f"the workflow failed the request: {cause}") from err
    except RPCError as err:
        if is_not_found(err):
            raise await why_unavailable(client, workflow_id, name) from err
        raise
