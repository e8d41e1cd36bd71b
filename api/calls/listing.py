"""Lists of sessions from Temporal's visibility: what `GET /sessions` and a REPL's `/sessions` show.

Read from the search attributes every session keeps up to date (`SynapseStatus`, `SynapsePending`,
`SynapseChannel`, `SynapseAssignee`), so listing costs the sessions nothing.
"""

from __future__ import annotations

from temporalio.client import Client, WorkflowExecutionStatus

from contracts import SessionStatus, SessionSummary
from workflows.identity import search_attributes
from workflows.identity.ids import session_key_of
from workflows.session import SessionWorkflow

SEARCHED_AS = {str(SessionStatus.ACTIVE): "running"}
"""A session status as `SynapseStatus` holds it, where they differ (`session.view.SEARCH_STATUS`)."""


async def list_sessions(
    client: Client, *, status: str | None = None, waiting: bool = False, limit: int = 50
) -> list[SessionSummary]:
    """The newest sessions first, at most `limit`; only those in `status`, or only those waiting for
    a person (`waiting`), when asked."""
    query = f"WorkflowType = '{SessionWorkflow.__name__}'"
    if status is not None:
        query += f" AND {search_attributes.STATUS.name} = '{SEARCHED_AS.get(status, status)}'"
    if waiting:
        query += f" AND {search_attributes.PENDING.name} > 0"
    found: list[SessionSummary] = []
    async for execution in client.list_workflows(query, limit=limit):
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


def _status(searched: str | None) -> str:
    """The session status a `SynapseStatus` value stands for."""
    back = {value: status for status, value in SEARCHED_AS.items()}
    return back.get(searched or "running", searched or str(SessionStatus.ACTIVE))
