"""AgentTaskWorkflow: one version (or loop instance) of one graph task, run by its assignee.

It runs the shared agent loop with the shared supervision, so tool approvals inside a task work
exactly as in sessions (`decide` / `decide_checked`, `pause` / `resume` / `cancel`, the
approval timeout). It ends with a `TaskReport`: completed with the agent's answer (or plan), failed (the agent
failed, `max_turns`, or `timeout_seconds` ran out), or cancelled (a rollback or a cancel). The
graph run that started it awaits that result; a graph that continues-as-new first tells its
running task runs (`report_to_graph`), which then signal their report (`task_finished`) to the
graph's workflow id, reaching its new run. Pending interactions are always signalled
(`task_interactions`) when they change. The graph starts it with parent-close policy ABANDON, so
continue-as-new does not end it.

`timeout_seconds` is seconds of work (`WorkBudget`): time the run spends paused or waiting for a
person (a tool approval or a question pending) does not count; the approval timeout bounds those
waits. A completed run is remembered in the experience index (its inputs as the question, its
output as the answer); a failed or cancelled one is not. Inputs too large to carry in its start
come by reference and are read back first (`by_reference`).

Determinism: no I/O, time from `workflow.now()`. Changes to the commands issued here are gated
(`workflows/versioning`); recorded graph histories (a gated graph's task run) replay them.
"""

from __future__ import annotations

import asyncio

from temporalio import workflow
from temporalio.exceptions import ActivityError

with workflow.unsafe.imports_passed_through():
    from contracts import (
        AgentTaskInput,
        InteractionRequest,
        SessionStatus,
        TaskInteractions,
        TaskReport,
        UniversalMessage,
    )
    from contracts.names import REPORT_TO_GRAPH, TASK_FINISHED, TASK_INTERACTIONS

    from .state import TaskRunState

from ...agent.experience import remember
from ...agent.handlers import AgentRunHandlers
from ...agent.host import LoopOutcome
from ...agent.loop import run_agent_loop
from ...agent.supervised import SupervisedHost
from ...identity.ids import interaction_prefix
from ...supervision.handlers import StreamHandlers, SupervisionHandlers
from ...supervision.ports import Policy
from ...supervision.supervisor import supervise
from ..by_reference import whole
from ..view import asks
from .budget import WorkBudget
from .report import experience_of, report_of


@workflow.defn
class AgentTaskWorkflow(SupervisionHandlers, AgentRunHandlers, StreamHandlers):
    """One run of one graph task: the agent loop, supervised, reporting to its graph."""

    @workflow.init
    def __init__(self, input: AgentTaskInput) -> None:
        """Set up supervision and the stream (must happen in `__init__`)."""
        self._input = input
        self._state = TaskRunState(
            status=SessionStatus.PAUSED if input.paused else SessionStatus.ACTIVE,
            paused=input.paused,
            last_activity=workflow.now(),
        )
        policy = Policy(
            timeout_seconds=input.approval_timeout_seconds,
            approvers=input.approvers,
            channel=input.channel,
            layers=(input.agent.policies,) if input.agent else (),
            sandbox=input.agent.sandbox if input.agent else None,
        )
        self._chunks, self._supervisor = supervise(
            workflow.info().workflow_id,
            f"task {input.task_id!r} v{input.version}",
            self._state,
            policy,
            stream=None,
            show_status=self._show,
            refresh=lambda: None,
            prefix=interaction_prefix(input.task_uuid, input.version, input.instance),
            generation=input.generation,
        )
        self.publish = self._chunks.publish
        self._supervisor.requests.requester = input.requested_by
        self._host = SupervisedHost(self._supervisor, self._state)
        self._told: list[str] = []
        self._telling = False
        self._report_to_graph = False

    @workflow.run
    async def run(self, input: AgentTaskInput) -> TaskReport:
        """Run the agent until it answers, fails, times out or is cancelled; the report.

        The graph run that started this one awaits its result; a run that outlives it (the graph
        continued-as-new) is told so (`report_to_graph`) and signals its report instead.
        """
        workflow.set_current_details(self._details())
        teller = asyncio.create_task(self._tell_interactions())
        work = asyncio.create_task(self._work(input))
        try:
            report = await work
        except asyncio.CancelledError:
            work.cancel()
            await workflow.wait([work])  # it ends (issuing its last commands) before this run does
            if self._report_to_graph:
                await self._tell(
                    TASK_FINISHED,
                    TaskReport(
                        task_uuid=input.task_uuid,
                        version=input.version,
                        instance=input.instance,
                        status="cancelled",
                        error="cancelled by its graph",
                    ),
                )
            raise
        # A run ends only once its graph was told how its interactions stand: a decision followed
        # by the answer in one workflow task (a quick tool, a quick agent) ended the run while the
        # tell was still a command not sent, which ending cancelled (the chat card stayed "pending").
        await workflow.wait_condition(lambda: not self._telling and self._pending_ids() == self._told)
        teller.cancel()
        if self._report_to_graph:
            await self._tell(TASK_FINISHED, report)
        self._chunks.close()
        await workflow.wait_condition(workflow.all_handlers_finished)
        return report

    @workflow.signal(name=REPORT_TO_GRAPH)
    def report_to_graph(self) -> None:
        """The graph continued as new: it can no longer await this run, so signal the report to it."""
        self._report_to_graph = True

    async def _work(self, input: AgentTaskInput) -> TaskReport:
        try:
            input = await whole(input)
        except ActivityError as err:
            return TaskReport(
                task_uuid=input.task_uuid,
                version=input.version,
                instance=input.instance,
                status="failed",
                error=f"its inputs could not be read: {err.cause or err}",
            )
        self._state.messages = list(input.context)
        loop = asyncio.create_task(
            run_agent_loop(
                self._host,
                agent_id=input.agent_id,
                agent=input.agent,
                messages=self._state.messages,
                input_data=input.input_data,
                max_turns=input.max_turns,
            )
        )
        timed_out = await self._timed_out(loop, input.timeout_seconds) if input.timeout_seconds else None
        if timed_out is not None:
            loop.cancel()
            await workflow.wait([loop])  # it ends (issuing its last commands) before this run does
            return TaskReport(
                task_uuid=input.task_uuid,
                version=input.version,
                instance=input.instance,
                status="failed",
                error=timed_out,
            )
        report = report_of(input, await loop, input.max_turns)
        if report.status == "completed":
            record = experience_of(input, report, workflow.info().workflow_id, workflow.now())
            await remember(record, what=f"task {input.task_id!r} {self._run()}")
        return report

    async def _timed_out(self, loop: asyncio.Task[LoopOutcome], seconds: int) -> str | None:
        """Wait for the loop within `timeout_seconds`; why it failed when that ran out first."""
        if await WorkBudget(seconds, self._held).ran_out(loop.done):
            return f"timed out after {seconds} s of work (timeout_seconds)"
        return None

    def _held(self) -> bool:
        """The run is paused or waits for a person: its `timeout_seconds` clock stands still."""
        return self._state.paused or bool(self._state.pending)

    async def _tell_interactions(self) -> None:
        """Send the graph this run's pending interactions whenever they change."""
        while True:
            await workflow.wait_condition(lambda: self._pending_ids() != self._told)
            now = self._pending_ids()
            decided = [
                self._state.decided[i] for i in self._told if i not in now and i in self._state.decided
            ]
            self._told, self._telling = now, True
            await self._tell(
                TASK_INTERACTIONS,
                TaskInteractions(
                    task_uuid=self._input.task_uuid,
                    workflow_id=workflow.info().workflow_id,
                    pending=list(self._state.pending),
                    decided=decided,
                ),
            )
            self._telling = False

    def _pending_ids(self) -> list[str]:
        return [request.interaction_id for request in self._state.pending]

    async def _tell(self, signal: str, message: TaskReport | TaskInteractions) -> None:
        graph = workflow.get_external_workflow_handle(self._input.graph_workflow_id)
        try:
            await graph.signal(signal, message)
        except Exception as err:  # the graph has closed: nobody is left to tell
            workflow.logger.info("graph %s did not take %s: %s", self._input.graph_workflow_id, signal, err)

    def _show(self, status: str) -> None:
        self._state.status = status
        workflow.set_current_details(self._details())

    def _run(self) -> str:
        """Which run of its task this is: `v2`, or `v2 #3` for a loop instance."""
        instance = self._input.instance
        return f"v{self._input.version}" + (f" #{instance}" if instance is not None else "")

    def _details(self) -> str:
        """The Web UI's *Current details*: which task, whose, what it waits for."""
        lines = [
            f"**task** `{self._input.task_id}` {self._run()} of `{self._input.graph_workflow_id}`",
            f"**agent** `{self._input.agent_id}` · **status** {self._state.status}",
        ]
        if self._state.pending:  # a blank line first, or the Web UI shows the list as the line's text
            lines += ["", *(f"- waits for `{r.interaction_id}`: {asks(r)}" for r in self._state.pending)]
        return "\n".join(lines)

    @workflow.query
    def get_status(self) -> str:
        """active, waiting_approval, waiting_input or paused."""
        return self._state.status

    @workflow.query
    def get_pending(self) -> list[InteractionRequest]:
        """Interactions waiting for a person."""
        return list(self._state.pending)

    @workflow.query
    def get_messages(self) -> list[UniversalMessage]:
        """What the agent was shown and said in this run."""
        return list(self._state.messages)
