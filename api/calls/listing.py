"""Lists of sessions from Temporal's visibility: what `GET /sessions` and a REPL's `/sessions` show.

Read from the search attributes every session keeps up to date (`SynapseStatus`, `SynapsePending`,
`SynapseChannel`, `SynapseAssignee`), so listing costs the sessions nothing.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import timedelta

from temporalio.client import Client, WorkflowExecution, WorkflowExecutionStatus

from contracts import GraphSummary, InteractionRequest, SessionStatus, SessionSummary
from workflows.graph import TaskGraphWorkflow
from workflows.identity import search_attributes
from workflows.identity.ids import graph_id_of, session_key_of
from workflows.session import SessionWorkflow

from . import sessions

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
        query += f" AND {search_attributes.STATUS.name} = '{SEARCHED_AS.get(status, status)}'"
    if waiting:
        query += f" AND {search_attributes.PENDING.name} > 0"
    found: list[SessionSummary] = []
    async for execution in latest_runs(client.list_workflows(query, limit=limit)):
        attributes = execution.typed_search_attributes
        found.append(
            SessionSummary(
                session_key=session_key_of(execution.id),
                workflow_id=execution.id,
                status=_status(attributes.get(search_attributes.STATUS)),
                pending=attributes.get(search_attributes.PENDING) or 0,
                channel=attributes.get(search_attributes.CHANNEL),
                agent_id=attributes.get(search_attributes.ASSIGNEE),
                started_at=execution.start_time,
                closed=execution.status not in (None, WorkflowExecutionStatus.RUNNING),
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
        query += f" AND {search_attributes.STATUS.name} = '{status}'"
    found: list[GraphSummary] = []
    async for execution in latest_runs(client.list_workflows(query, limit=limit)):
        attributes = execution.typed_search_attributes
        found.append(
            GraphSummary(
                graph_id=graph_id_of(execution.id),
                workflow_id=execution.id,
                status=attributes.get(search_attributes.STATUS) or "running",
                pending=attributes.get(search_attributes.PENDING) or 0,
                channel=attributes.get(search_attributes.CHANNEL),
                started_at=execution.start_time,
                closed=execution.status not in (None, WorkflowExecutionStatus.RUNNING),
            )
        )
    return found


def _status(searched: str | None) -> str:
    """The session status a `SynapseStatus` value stands for."""
    back = {value: status for status, value in SEARCHED_AS.items()}
    return back.get(searched or "running", searched or str(SessionStatus.ACTIVE))


async def latest_runs(executions: AsyncIterator[WorkflowExecution]) -> AsyncIterator[WorkflowExecution]:
    """Each workflow once, as its newest run (visibility lists a reopened graph's or restarted
    session's earlier runs too; newest first, so the first seen is the latest)."""
    seen: set[str] = set()
    async for execution in executions:
        if execution.id not in seen:
            seen.add(execution.id)
            yield execution


def answerable_by(request: InteractionRequest, principal: str) -> bool:
    """Whether `principal` may answer `request`: anyone may when it names no approvers; else its
    approvers, and once it has escalated, those it escalated to."""
    if not request.approvers or principal in request.approvers:
        return True
    return request.escalated and principal in request.escalate_to


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
