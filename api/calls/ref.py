"""`WorkflowRef`: a session or a graph as the calls address it.

Its workflow id, how messages name it (`"session 'abc'"`, `"graph '0b1…'"`) and the read that shows
whether an unanswered command was applied (`GET /sessions/abc`); its queries (`workflow.py`) and
updates run in those words.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, TypeVar

from temporalio.client import Client, WorkflowHandle

from workflows.identity.ids import graph_id_of, graph_workflow_id, session_workflow_id

from . import workflow
from .busy import retry_while_busy
from .endings import Ending
from .workflow import BUSY_RETRY_SECONDS, QUERY_WAIT

T = TypeVar("T")


@dataclass(frozen=True)
class WorkflowRef:
    """A workflow the API calls, with the words its errors use."""

    workflow_id: str
    name: str
    """How messages name it: `session 'abc'`, `graph '0b1…'`."""
    check_with: str
    """The read that shows whether an unanswered command to it was applied."""

    @classmethod
    def session(cls, key: str) -> WorkflowRef:
        """The session with this key (`session:<key>`)."""
        return cls(session_workflow_id(key), f"session {key!r}", f"GET /sessions/{key}")

    @classmethod
    def graph(cls, graph_id: str) -> WorkflowRef:
        """The graph with this UUID (or full workflow id)."""
        uuid = graph_id_of(graph_id)
        return cls(graph_workflow_id(graph_id), f"graph {uuid!r}", f"GET /graphs/{uuid}")

    def on(self, workflow_id: str) -> WorkflowRef:
        """Another workflow in this one's words: a graph's task run, or the workflow a request
        was relayed to (decided as the session or graph the caller named)."""
        return dataclasses.replace(self, workflow_id=workflow_id)

    def handle(self, client: Client) -> WorkflowHandle[Any, Any]:
        """Handle of its latest run."""
        return client.get_workflow_handle(self.workflow_id)

    async def query(self, client: Client, query: Any, *args: Any, wait: timedelta = QUERY_WAIT) -> Any:
        """Run one of its queries (also once it has closed); see `workflow.query`."""
        return await workflow.query(client, self.workflow_id, self.name, query, *args, wait=wait)

    async def read(
        self, client: Client, query: Any, *args: Any, wait: timedelta = QUERY_WAIT
    ) -> tuple[Any, Ending | None]:
        """Run one of its queries: its answer, and how it ended when Temporal ended it (see
        `workflow.read`: no cost while it runs)."""
        return await workflow.read(client, self.workflow_id, self.name, query, *args, wait=wait)

    async def run_update(
        self,
        client: Client,
        update: Any,
        argument: Any,
        result_type: type[T],
        *,
        wait: timedelta | None = None,
        within: float = BUSY_RETRY_SECONDS,
    ) -> T:
        """Run `update(argument)` on it, retrying while Temporal is busy for `within` seconds.

        Each attempt waits at most `wait` (default `workflow.UPDATE_WAIT`) for the workflow's worker
        to answer; an unanswered one names `check_with`, the read that shows whether it was applied.

        Raises:
            Refused, NotFound, Closed, NotAnswered: See `workflow.update_errors`.
            RPCError: Temporal stayed busy (`busy.is_busy`) or failed otherwise.
        """
        handle = self.handle(client)
        timeout = workflow.UPDATE_WAIT if wait is None else wait  # read now: tests shorten UPDATE_WAIT
        async with workflow.update_errors(client, self.workflow_id, self.name, check_with=self.check_with):
            result: T = await retry_while_busy(
                lambda: handle.execute_update(
                    update, argument, id=workflow.update_id(), result_type=result_type, rpc_timeout=timeout
                ),
                within=within,
            )
        return result
