"""Lists of sessions and graphs from Temporal's visibility: what `GET /sessions`, `GET /graphs` and
a REPL's `/sessions` show.

Read from the search attributes every session and graph keeps up to date (`SynapseStatus`,
`SynapsePending`, `SynapseChannel`, `SynapseAssignee`), so listing costs them nothing. One that
Temporal ended while it ran (its search attributes still say it runs) reads as it ended, from the
execution's status, with how from its close event (read only for those, together).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import timedelta

from temporalio.client import Client, WorkflowExecution, WorkflowExecutionStatus

from contracts import GraphSummary, SessionStatus, SessionSummary
from core.waiting import answerable_by
from workflows.graph import TaskGraphWorkflow
from workflows.identity import search_attributes
from workflows.identity.ids import graph_id_of, session_key_of
from workflows.session import SessionWorkflow

from . import ended, sessions
from .endings import ENDED_AS, Ending, ending_of
from .graphs import TITLE

SEARCHED_AS = {str(SessionStatus.ACTIVE): "running"}
"""A session status as `SynapseStatus` holds it, where they differ (`session.view.SEARCH_STATUS`)."""


async def list_sessions(
    client: Client, *, status: str | None = None, waiting: bool = False, limit: int = 50, within: str = ""
) -> list[SessionSummary]:
    """The newest sessions first, at most `limit`; only those in `status`, or only those waiting for
    a person (`waiting`), when asked; `within`: a clause keeping a scoped key's projects
    (`scope.visible_to`)."""
    query = f"WorkflowType = '{SessionWorkflow.__name__}'{within}"
    if status is not None:
        query += _in_status(SEARCHED_AS.get(status, status))
    if waiting:
        query += f" AND {search_attributes.PENDING.name} > 0 AND ExecutionStatus = 'Running'"
    found: list[SessionSummary] = []
    executions = await newest(client, query, limit)
    for execution, ending in zip(executions, await _endings(client, executions), strict=True):
        attributes = execution.typed_search_attributes
        pending = attributes.get(search_attributes.PENDING) or 0
        found.append(
            SessionSummary(
                session_key=session_key_of(execution.id),
                workflow_id=execution.id,
                status=ending.status if ending else _status(attributes.get(search_attributes.STATUS)),
                pending=0 if ending else pending,
                channel=attributes.get(search_attributes.CHANNEL),
                agent_id=attributes.get(search_attributes.ASSIGNEE),
                started_at=execution.start_time,
                closed=execution.status not in (None, WorkflowExecutionStatus.RUNNING),
                reason=ended.session_reason(ending) if ending else None,
            )
        )
    return found


async def list_graphs(
    client: Client, *, status: str | None = None, limit: int = 50, within: str = ""
) -> list[GraphSummary]:
    """The newest graphs first, at most `limit`; only those in `status` when asked; `within` as for
    sessions (a session's graph has no project of its own: a scoped key reaches it through its
    session, never in this list)."""
    query = f"WorkflowType = '{TaskGraphWorkflow.__name__}' AND ExecutionStatus != 'ContinuedAsNew'{within}"
    if status is not None:
        query += _in_status(status)
    found: list[GraphSummary] = []
    executions = await newest(client, query, limit)
    titles = await asyncio.gather(*(_title(execution) for execution in executions))
    for execution, ending, title in zip(executions, await _endings(client, executions), titles, strict=True):
        attributes = execution.typed_search_attributes
        found.append(
            GraphSummary(
                graph_id=graph_id_of(execution.id),
                workflow_id=execution.id,
                title=title,
                status=ending.status if ending else attributes.get(search_attributes.STATUS) or "running",
                pending=0 if ending else attributes.get(search_attributes.PENDING) or 0,
                channel=attributes.get(search_attributes.CHANNEL),
                started_at=execution.start_time,
                closed=execution.status not in (None, WorkflowExecutionStatus.RUNNING),
                reason=ended.graph_reason(ending) if ending else None,
            )
        )
    return found


async def _title(execution: WorkflowExecution) -> str | None:
    """A graph's title (its memo, set when it started), else the session that started it."""
    title = await execution.memo_value(TITLE, None)
    if isinstance(title, str):
        return title
    return f"from {execution.parent_id}" if execution.parent_id else None


GOING = ("running", "paused", *SEARCHED_AS.values(), *ended.SESSION_GOING)
"""`SynapseStatus` values of a graph or session still going: one Temporal ended keeps them."""
ENDED_IN_VISIBILITY = {
    "terminated": "Terminated",
    "timed_out": "TimedOut",
    "failed": "Failed",
    "cancelled": "Canceled",
}
"""The execution status (as visibility queries name it) of a workflow Temporal ended, by the status
its graph or session reads as (`endings.ENDED_AS`)."""


def _in_status(status: str) -> str:
    """The visibility clause keeping graphs or sessions that read as `status`: one Temporal ended
    while it ran by its execution status, or Synapse's own status (a graph failed by its tasks, a
    session cancelled); one still going only while its workflow runs."""
    searched = f"{search_attributes.STATUS.name} = '{status}'"
    if status in ENDED_IN_VISIBILITY:
        return f" AND (ExecutionStatus = '{ENDED_IN_VISIBILITY[status]}' OR {searched})"
    return f" AND {searched}" + (" AND ExecutionStatus = 'Running'" if status in GOING else "")


async def _endings(client: Client, executions: list[WorkflowExecution]) -> list[Ending | None]:
    """How Temporal ended each execution that it ended while it still ran (None for the others),
    read together; only those cost a call."""

    async def ending(execution: WorkflowExecution) -> Ending | None:
        if execution.status not in ENDED_AS:
            return None
        if execution.typed_search_attributes.get(search_attributes.STATUS) not in GOING:
            return None  # it had finished by itself (a session cancelled, a graph completed)
        status = ENDED_AS[execution.status]
        unknown = Ending(status, "how is not known: its close event could not be read", execution.close_time)
        return await ending_of(client, execution.id, execution.run_id) or unknown

    return list(await asyncio.gather(*(ending(execution) for execution in executions)))


def _status(searched: str | None) -> str:
    """The session status a `SynapseStatus` value stands for."""
    back = {value: status for status, value in SEARCHED_AS.items()}
    return back.get(searched or "running", searched or str(SessionStatus.ACTIVE))


async def newest(client: Client, query: str, limit: int) -> list[WorkflowExecution]:
    """The `limit` workflows matching `query` that started last, each as its latest run, newest first.

    Visibility lists every running workflow before any closed one, so one list of `limit` would hide
    every ended session behind the running ones: the running and the closed are listed apart (the
    first `limit` of each) and merged by start time."""
    lists = await asyncio.gather(
        *(
            _collect(
                latest_runs(
                    client.list_workflows(f"({query}) AND ExecutionStatus {op} 'Running'", limit=limit)
                )
            )
            for op in ("=", "!=")
        )
    )
    running = {execution.id for execution in lists[0]}
    merged = lists[0] + [execution for execution in lists[1] if execution.id not in running]
    merged.sort(key=lambda execution: execution.start_time, reverse=True)
    return merged[:limit]


async def _collect(executions: AsyncIterator[WorkflowExecution]) -> list[WorkflowExecution]:
    return [execution async for execution in executions]


async def latest_runs(executions: AsyncIterator[WorkflowExecution]) -> AsyncIterator[WorkflowExecution]:
    """Each workflow once, as its newest run (visibility lists a reopened graph's or restarted
    session's earlier runs too; newest first, so the first seen is the latest)."""
    seen: set[str] = set()
    async for execution in executions:
        if execution.id not in seen:
            seen.add(execution.id)
            yield execution


async def waiting_for(
    client: Client, found: list[SessionSummary], principal: str, *, wait: timedelta
) -> list[SessionSummary]:
    """Those of `found` with a request `principal` may answer (each waiting session is asked; one
    whose worker does not answer within `wait` is kept, so nothing waiting is hidden)."""

    async def mine(summary: SessionSummary) -> bool:
        if summary.closed or not summary.pending:
            return False
        try:
            live = await sessions.get_status(client, summary.session_key, wait=wait)
        except Exception:  # unreadable now: show it rather than hide a request
            return True
        return any(answerable_by(request, principal) for request in live.pending_interactions)

    kept = await asyncio.gather(*(mine(summary) for summary in found))
    return [summary for summary, keep in zip(found, kept, strict=True) if keep]
