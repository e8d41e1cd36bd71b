"""The task graphs a session's agent proposes: run as child graphs, relayed to the session's people.

When the agent answers a turn with a `PlanBlueprint`, the session starts a `TaskGraphWorkflow`
child (`graph:<uuid>`, its requester the person who asked) and waits for it; the turn's answer is
the graph's outputs. Meanwhile the graph tells the session (`graph_progress`) which tasks started,
finished or wait, and which gates and tool approvals wait for a person: they are published on the
session's stream, listed with the session's own requests (`GET /sessions/{key}`) and, in a chat,
shown as cards. They are decided like the session's own, by the session's one `Decisions.reply`
(a chat reply) or `decide` (a signal): checked here as the asking workflow will check them (a
refusal is audited here and told to the chat) and passed on to the workflow that asked (the
graph, or its task run) by its `decide` signal as a `relay` decision (`elsewhere` names it here);
an HTTP decision or a card click goes there directly. `waiting` and `answered` say which relayed
request the next chat message answers. When the graph reports the decision, it is published here too (with the
chat message that took it, so an HTTP sender waiting for its turn finds it). Cancelling the
session cancels the graph.
"""

from __future__ import annotations

from typing import Any

from temporalio import workflow
from temporalio.exceptions import ChildWorkflowError
from temporalio.workflow import ParentClosePolicy

with workflow.unsafe.imports_passed_through():
    from contracts import (
        GraphConfig,
        GraphProgress,
        GraphStarted,
        InboundMessage,
        InteractionRequest,
        PlanBlueprint,
        RequestOpened,
        SessionConfig,
    )

    from ..graph.state import GRAPH_TASK_TIMEOUT, GraphRunInput
    from .state import SessionState

from ..agent.host import LoopOutcome
from ..graph import TaskGraphWorkflow
from ..identity.ids import graph_workflow_id
from ..stream.chunks import Publish
from ..supervision.decisions import Decisions, taken
from ..supervision.relayed import DecisionRelay
from ..versioning import GENERATION
from .outbox import ChannelOutbox


class SessionGraphs:
    """The child graph of a session's current turn, and the requests it relays."""

    def __init__(
        self,
        owner_id: str,
        config: SessionConfig,
        state: SessionState,
        publish: Publish,
        outbox: ChannelOutbox,
        decisions: Decisions,
    ) -> None:
        self._owner_id = owner_id
        self._config = config
        self._state = state
        self._publish = publish
        self._outbox = outbox
        self._answered: dict[str, tuple[str | None, str]] = {}
        """Relayed requests a chat reply has answered (the decision is on its way to the graph), with
        the message that did and who sent it."""
        decisions.elsewhere = self.owner_of
        decisions.relay = DecisionRelay(owner_id)

    def owner_of(self, interaction_id: str) -> str | None:
        """The workflow that asked a request this session relays (None: it relays no such request)."""
        return next((r.workflow_id for r in self._state.relayed if r.interaction_id == interaction_id), None)

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
            inline_input_bytes=self._config.inline_input_bytes,
        )
        workflow_id = graph_workflow_id(graph_id)
        handle = await workflow.start_child_workflow(
            TaskGraphWorkflow.run,
            GraphRunInput(config=config, blueprint=plan, generation=GENERATION),
            id=workflow_id,
            parent_close_policy=ParentClosePolicy.REQUEST_CANCEL,
            task_timeout=GRAPH_TASK_TIMEOUT,
            static_summary=f"Graph of {len(plan.new_tasks)} tasks proposed in session {self._config.session_key}",
        )
        self._state.graph = workflow_id
        started = GraphStarted(
            graph_id=graph_id, workflow_id=workflow_id, tasks=[t.task_id for t in plan.new_tasks]
        )
        self._publish(started)
        self._outbox.tell(started)
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
            self._publish(change.model_copy(update={"graph": message.graph_workflow_id}))
        known = {request.interaction_id for request in self._state.relayed}
        for request in message.pending:
            if request.interaction_id not in known:
                self._publish(RequestOpened(request=request))
                self._outbox.approval_requested(request)
        by_id = {request.interaction_id: request for request in self._state.relayed}
        for outcome in message.decided:
            shown = by_id.get(outcome.interaction_id)
            if shown is None:
                continue
            message_id, _who = self._answered.pop(outcome.interaction_id, (None, ""))
            self._publish(taken(outcome, workflow_id=shown.workflow_id, message_id=message_id))
            self._outbox.decided(shown, outcome)
        self._state.relayed = list(message.pending)
        for request in message.pending:  # one approval of two counted: the next reply answers it again
            answered = self._answered.get(request.interaction_id)
            if answered is not None and answered[1] in request.approved_by:
                del self._answered[request.interaction_id]

    def waiting(self) -> InteractionRequest | None:
        """The relayed request a chat message now answers (None: none waits, or each has its answer
        on the way)."""
        return next((r for r in self._state.relayed if r.interaction_id not in self._answered), None)

    def answered(self, request: InteractionRequest, message: InboundMessage) -> None:
        """A chat message's decision on `request` went to the graph: the next message is not its
        answer (until the graph reports it, or counts it as one approval of two)."""
        self._answered[request.interaction_id] = (message.message_id, message.sender_id)
