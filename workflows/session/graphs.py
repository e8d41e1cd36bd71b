"""The task graphs a session's agent proposes: run as child graphs, relayed to the session's people.

When the agent answers a turn with a `PlanBlueprint`, the session starts a `TaskGraphWorkflow`
child (`graph:<uuid>`, its requester the person who asked) and waits for it; the turn's answer is
the graph's outputs. Meanwhile the graph tells the session (`graph_progress`) which tasks started,
finished or wait, and which gates and tool approvals wait for a person: they are published on the
session's stream and, in a chat, shown as cards. A chat reply (确认/取消) or a card click decides
them: the decision is sent to the workflow that asked (the graph, or its task run) by its
`respond` signal, which audits a refusal. Cancelling the session cancels the graph.

Starting graphs issues commands: sessions do it only in histories that took `SESSION_GRAPHS_PATCH`.
"""

from __future__ import annotations

import asyncio
from typing import Any

from temporalio import workflow
from temporalio.exceptions import ChildWorkflowError
from temporalio.workflow import ParentClosePolicy

with workflow.unsafe.imports_passed_through():
    from contracts import (
        GraphConfig,
        GraphProgress,
        InboundMessage,
        InteractionResponse,
        PlanBlueprint,
        SessionConfig,
        TaskChunkType,
    )
    from contracts.names import RESPOND

    from ..graph.state import GRAPH_TASK_TIMEOUT, GraphRunInput
    from .state import SessionState

from ..agent.host import LoopOutcome
from ..graph import TaskGraphWorkflow
from ..identity.ids import graph_workflow_id
from ..stream.chunks import Publish
from ..supervision.chat_reply import interpret_reply
from ..supervision.checks import may_decide
from ..supervision.requests import announced
from ..versioning import GENERATION, patched
from .outbox import ChannelOutbox

SESSION_GRAPHS_PATCH = "sessions-run-graphs"
"""Patch id: a plan from a session's agent runs as a child graph (it used to end the turn)."""
GRAPH_TASK_TIMEOUT_PATCH = "graph-task-timeout"
"""Patch id: a child graph starts with `GRAPH_TASK_TIMEOUT` (Temporal's 10 s before)."""


class SessionGraphs:
    """The child graph of a session's current turn, and the requests it relays."""

    def __init__(
        self,
        owner_id: str,
        config: SessionConfig,
        state: SessionState,
        publish: Publish,
        outbox: ChannelOutbox,
    ) -> None:
        self._owner_id = owner_id
        self._config = config
        self._state = state
        self._publish = publish
        self._outbox = outbox
        self._sending: list[asyncio.Task[None]] = []
        self._answered: set[str] = set()
        """Relayed requests a chat reply has answered (the decision is on its way to the graph)."""

    async def run(self, plan: PlanBlueprint, requester: str | None) -> LoopOutcome:
        """Run the plan as a child graph and wait for it (or for the session's cancel); its outcome."""
        graph_id = str(workflow.uuid4())
        approvers = list(self._config.approvers)
        if self._config.approve_by_requester and requester and requester not in approvers:
            approvers.insert(0, requester)
        config = GraphConfig(
            graph_id=graph_id,
            requested_by=requester or "anonymous",
            channel=self._config.channel,
            approvers=approvers,
            approval_timeout_seconds=self._config.approval_timeout_seconds,
            parent_session=self._owner_id,
            max_turns=self._config.max_turns,
        )
        workflow_id = graph_workflow_id(graph_id)
        handle = await workflow.start_child_workflow(
            TaskGraphWorkflow.run,
            GraphRunInput(config=config, blueprint=plan, generation=GENERATION),
            id=workflow_id,
            parent_close_policy=ParentClosePolicy.REQUEST_CANCEL,
            task_timeout=GRAPH_TASK_TIMEOUT if patched(GRAPH_TASK_TIMEOUT_PATCH) else None,
            static_summary=f"Graph of {len(plan.new_tasks)} tasks proposed in session {self._config.session_key}",
        )
        self._state.graph = workflow_id
        self._publish(
            TaskChunkType.PROGRESS,
            {"graph_id": graph_id, "workflow_id": workflow_id, "tasks": [t.task_id for t in plan.new_tasks]},
        )
        self._outbox.text(f"Running a task graph of {len(plan.new_tasks)} tasks ({workflow_id}).")
        await workflow.wait_condition(lambda: handle.done() or self._state.cancelled)
        if not handle.done():
            handle.cancel()
        try:
            result = await handle
        except ChildWorkflowError as err:
            return LoopOutcome(
                "answer",
                answer={"graph_id": graph_id, "status": "cancelled", "reason": str(err.cause or err)},
            )
        finally:
            self._state.graph = None
            self._state.relayed = []
        answer: dict[str, Any] = {
            "graph_id": graph_id,
            "status": result.status.value,
            "outputs": result.outputs,
        }
        if result.reason:
            answer["reason"] = result.reason
        return LoopOutcome("answer", answer=answer)

    def progress(self, message: GraphProgress) -> None:
        """The graph's news: publish task changes, show new requests, close decided ones."""
        if message.graph_workflow_id != self._state.graph:
            return
        for change in message.changes:
            self._publish(TaskChunkType.PROGRESS, {**change, "graph": message.graph_workflow_id})
        known = {request.interaction_id for request in self._state.relayed}
        for request in message.pending:
            if request.interaction_id not in known:
                self._publish(
                    TaskChunkType.TOOL_APPROVAL_REQUEST,
                    request.content,
                    metadata=announced(request),
                )
                self._outbox.approval_requested(request)
        by_id = {request.interaction_id: request for request in self._state.relayed}
        for outcome in message.decided:
            shown = by_id.get(outcome.interaction_id)
            if shown is not None:
                self._outbox.decided(shown, outcome)
        self._state.relayed = list(message.pending)

    def reply(self, message: InboundMessage) -> bool:
        """A chat message while a relayed request waits: its answer (False: nothing waits)."""
        request = next((r for r in self._state.relayed if r.interaction_id not in self._answered), None)
        if request is None:
            return False
        if not may_decide(request, message.sender_id):
            reason = (
                f"{message.sender_id} may not answer {request.interaction_id}; "
                f"allowed approvers: {', '.join(request.approvers)}"
            )
            self._outbox.text(reason)
            self._publish(
                TaskChunkType.ERROR, {"error": reason}, metadata={"interaction_id": request.interaction_id}
            )
            return True
        reply = interpret_reply(message.content)
        response = InteractionResponse(
            interaction_id=request.interaction_id,
            approved=reply == "approve",
            principal=message.sender_id,
            channel=message.channel,
            user_message=message.content
            if reply != "ambiguous"
            else f"ambiguous reply {message.content!r} counts as deny",
        )
        self._answered.add(request.interaction_id)  # shown until the graph reports the decision
        self._sending.append(asyncio.create_task(self._send(request.workflow_id, response)))
        return True

    async def _send(self, workflow_id: str, response: InteractionResponse) -> None:
        try:
            await workflow.get_external_workflow_handle(workflow_id).signal(RESPOND, response)
        except Exception as err:  # the graph or task run has closed
            workflow.logger.info("%s did not take the decision: %s", workflow_id, err)
