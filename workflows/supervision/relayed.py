"""Decisions passed on to the workflow that asked: a session's graph, or a graph's task run.

A session shows the requests of the graph its agent proposed, and a graph those of its task runs;
a decision that reaches the one that only shows a request (a chat reply, a refused HTTP decision
sent to be recorded) is passed on by the asker's `decide` signal as a `relay` decision, whose own
checks decide it and record a refusal. Sending is a command (a change to it is gated).
"""

from __future__ import annotations

import asyncio

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from contracts import Decision, DecisionSource
    from contracts.names import DECIDE


class DecisionRelay:
    """Passes decisions on from one run (`owner_id`) to the workflows that asked."""

    def __init__(self, owner_id: str) -> None:
        self._owner_id = owner_id
        self._sending: set[asyncio.Task[None]] = set()

    def forward(self, workflow_id: str, decision: Decision) -> None:
        """Send `decision` to `workflow_id` as a `relay` decision (the door it came through is kept
        in its metadata, `came_by`)."""
        relayed = decision.model_copy(
            update={
                "source": DecisionSource.RELAY,
                "metadata": {
                    **decision.metadata,
                    "relayed_by": self._owner_id,
                    "came_by": str(decision.source),
                },
            }
        )
        sending = asyncio.create_task(self._send(workflow_id, relayed))
        self._sending.add(sending)
        sending.add_done_callback(self._sending.discard)

    async def _send(self, workflow_id: str, decision: Decision) -> None:
        try:
            await workflow.get_external_workflow_handle(workflow_id).signal(DECIDE, decision)
        except Exception as err:  # the workflow that asked has closed
            workflow.logger.info("%s did not take the decision: %s", workflow_id, err)
