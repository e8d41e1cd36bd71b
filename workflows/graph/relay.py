"""Telling the session that started a graph what changed and what waits for a person.

A graph started by a session's agent (`parent_session`) sends it a `GraphProgress` signal
(`graph_progress`) whenever tasks changed, decisions were taken, or the set of waiting requests
differs from what it last sent, within the graph's payload budget (`budget`: one message of
many changes is one payload, which the claim check keeps out of history when large). A session
that has closed is let go.
"""

from __future__ import annotations

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from contracts import EdgeChanged, GraphProgress, InteractionOutcome, TaskChanged
    from contracts.names import GRAPH_PROGRESS


from . import view
from .budget import encoded_size
from .run import GraphRun


class Relay:
    """What the parent session has not heard yet, and sending it."""

    def __init__(self, run: GraphRun) -> None:
        self._owner_id = run.owner_id
        self._session = run.config.parent_session
        self._state = run.state
        self._budget = run.budget
        self._changes: list[TaskChanged] = []
        self._decided: list[InteractionOutcome] = []
        self._sent_ids: list[str] = []

    def changed(self, changes: list[TaskChanged | EdgeChanged]) -> None:
        """Task changes to pass on (edge changes are the graph's own business)."""
        if self._session:
            self._changes += [change for change in changes if isinstance(change, TaskChanged)]

    def decided(self, outcomes: list[InteractionOutcome]) -> None:
        """Decisions to pass on."""
        if self._session:
            self._decided += outcomes

    async def send(self) -> None:
        """Signal the session when it has something new."""
        if not self._session:
            return
        pending = view.pending_interactions(self._state)
        ids = [request.interaction_id for request in pending]
        if not (self._changes or self._decided or ids != self._sent_ids):
            return
        message = GraphProgress(
            graph_workflow_id=self._owner_id, changes=self._changes, pending=pending, decided=self._decided
        )
        self._changes, self._decided, self._sent_ids = [], [], ids
        size = encoded_size(message)
        await self._budget.admit(size)
        try:
            await workflow.get_external_workflow_handle(self._session).signal(GRAPH_PROGRESS, message)
        except Exception as err:  # the session has closed
            workflow.logger.info("session %s did not take the graph's progress: %s", self._session, err)
        finally:
            self._budget.give_back(size)
