"""TaskGraphWorkflow: a PlanBlueprint being executed (`graph:<uuid>`).

The graph accepts its blueprint (assignees resolved by the `resolve_agents` local activity, every
check of `blueprint.expand`), then loops: the scheduler decides what runs, skips or fails; ready
runs start together, in one workflow task, as `AgentTaskWorkflow` children (capped below
Temporal's pending-children limit); gates ask a person (CONFIRMATION) through the shared
supervision; runs report back by signal. Agents' plans and `extend` grow the graph while it runs;
`intervene` pauses, resumes or rolls back a task; `pause`/`resume`/`cancel` act on the whole
graph. It continues-as-new with its state when history grows, without losing running children
(they are ABANDON children that signal the graph's workflow id) or open gates (re-armed).

Determinism: no I/O, ids from `workflow.uuid4()`, time from `workflow.now()`; a change to the
commands issued here must go behind `workflow.patched()` (recorded graph histories replay).
"""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

from temporalio import workflow
from temporalio.common import Priority, RetryPolicy
from temporalio.exceptions import ApplicationError, CancelledError, ChildWorkflowError
from temporalio.workflow import ChildWorkflowHandle, ParentClosePolicy

with workflow.unsafe.imports_passed_through():
    from contracts import (
        AgentLookup,
        AgentLookupResult,
        ArchiveCursor,
        AuditEntry,
        BlueprintChange,
        ErrorType,
        GraphIntervention,
        GraphProgress,
        GraphQuery,
        GraphStatus,
        GraphTask,
        GraphView,
        InteractionOutcome,
        InteractionRequest,
        InteractionType,
        Principal,
        SessionControl,
        TaskChunkType,
        TaskInteractions,
        TaskReport,
        TaskStatus,
        WatchRequest,
        WatchResult,
    )

    from .state import GraphRunInput, GraphState

from ..archive import archive_stream
from ..chunk_stream import ChunkStream
from ..ids import run_of_interaction, task_run_workflow_id
from ..supervision import approvals
from ..supervision.handlers import SupervisionHandlers
from ..supervision.interventions import Interventions
from ..supervision.ports import Policy, Silent, Surface
from ..supervision.supervisor import Supervisor
from . import task_interventions, view
from .blueprint import UPDATABLE_STATUS, BlueprintRefused, assignees_of, expand
from .cel import Conditions
from .runs import agent_id_of, high_priority, run_input
from .scheduler import Progress, Run, Scheduler, current, gate_of, has_goto
from .task_run import REPORT_TO_GRAPH, TASK_FINISHED, TASK_INTERACTIONS, AgentTaskWorkflow

RESOLVE_AGENTS = "resolve_agents"
RESOLVE_TIMEOUT = timedelta(seconds=10)
RESOLVE_RETRY = RetryPolicy(maximum_attempts=5)
CANCEL_WAIT = timedelta(seconds=60)
"""How long a rollback or a cancel waits for cancelled runs to end before going on without them."""
STREAM_KEPT = 1000
"""Chunks the stream carries into the next run; older ones are archived (SSE still reads them)."""
STREAM_PAGE = 500
GRAPH_PROGRESS = "graph_progress"
"""The signal a parent session takes the graph's progress by."""


@workflow.defn
class TaskGraphWorkflow(SupervisionHandlers):
    """A blueprint's tasks run by their assignees, supervised, extendable and intervenable."""

    @workflow.init
    def __init__(self, input: GraphRunInput) -> None:
        """Restore or create state; register the stream (must happen in `__init__`)."""
        self._config = input.config
        self._cas_after = input.continue_as_new_after_events
        now = workflow.now()
        self._state = input.state or GraphState(created_at=now, last_activity=now)
        self._chunks = ChunkStream(self.owner_id, self._state, input.stream)
        self.publish = self._chunks.publish
        surface = Surface(
            publish=self.publish, channel=Silent(), show_status=self._show, refresh=self._refresh
        )
        policy = Policy(
            timeout_seconds=self._config.approval_timeout_seconds,
            approvers=list(self._config.approvers),
            channel=self._config.channel,
        )
        self._supervisor = Supervisor(self.owner_id, self._state, policy, surface)
        self._interventions = Interventions(f"graph {self._config.graph_id}", self._state, surface)
        self._conditions = Conditions()
        self._scheduler = Scheduler(
            self._state, self._conditions, workflow.now, max_running=self._config.max_running_tasks
        )
        self._dirty = True
        self._plans: list[tuple[GraphTask, BlueprintChange]] = []
        self._told_paused: dict[str, bool] = {}
        self._relay_changes: list[dict[str, Any]] = []
        self._relay_decided: list[InteractionOutcome] = []
        self._relayed_ids: list[str] = []
        self._starting: set[str] = set()
        """Runs whose start has been asked for but not confirmed (cancel them only once started)."""
        self._awaiting: set[asyncio.Task[None]] = set()
        """Tasks awaiting the results of the runs this graph run started."""
        self._graph_paused = self._state.paused
        self._shown: tuple[str, int] = ("", -1)

    @property
    def owner_id(self) -> str:
        """This graph's workflow id."""
        return workflow.info().workflow_id

    # ----------------------------------------------------------------- run

    @workflow.run
    async def run(self, input: GraphRunInput) -> GraphView:
        """Run the graph until every task has finished, or it is cancelled."""
        state = self._state
        if input.blueprint is not None and not state.order:
            try:
                await self._accept(
                    BlueprintChange(
                        blueprint=input.blueprint,
                        principal=self._config.requested_by,
                        agents=input.agents,
                        task_uuids=input.task_uuids,
                    )
                )
            except ApplicationError as err:
                state.status, state.reason = GraphStatus.FAILED, f"the blueprint was refused: {err.message}"
                state.finished_at = workflow.now()
                self._show()
                self.publish(
                    TaskChunkType.ERROR, {"status": state.status, "reason": state.reason}, is_final=True
                )
                self._chunks.close()
                return self._view(GraphQuery())
        self._rearm_gates()
        self._show()
        try:
            await self._run_tasks()
        except asyncio.CancelledError:  # cancelled in Temporal (the Web UI, `temporal workflow cancel`)
            state.cancelled = True
            state.cancel_reason = state.cancel_reason or "the workflow was cancelled in Temporal"
        await self._close()
        await workflow.wait_condition(workflow.all_handlers_finished)
        return self._view(GraphQuery())

    async def _run_tasks(self) -> None:
        """The graph's loop: advance, start, relay, wait; until every task has finished, or a cancel."""
        state = self._state
        while not state.cancelled:
            self._dirty = False  # before any await: what arrives meanwhile marks it again
            await self._take_plans()
            progress = self._scheduler.advance()
            await self._act(progress)
            await self._relay()
            if self._scheduler.finished() and not self._plans:
                break
            if self._continue_as_new_due() and not self._plans:
                await self._continue_as_new()
            await workflow.wait_condition(self._needs_attention)

    def _needs_attention(self) -> bool:
        """Something to do: a report, a plan, an intervention, a pause or resume of the graph."""
        return self._dirty or self._state.cancelled or self._state.paused != self._graph_paused

    async def _act(self, progress: Progress) -> None:
        """Publish what changed, open gates, cancel what must stop, start what is ready, in one go."""
        self._note(progress.changes)
        for uuid in progress.gates:
            asyncio.create_task(self._gate(uuid))  # noqa: RUF006 (the graph keeps its own state)
        await self._cancel_runs(progress.cancel)
        if progress.runs:
            await asyncio.gather(*(self._start(run) for run in progress.runs))
        await self._tell_pauses()
        if progress.changes or progress.runs:
            self._state.last_activity = workflow.now()
            self._show()

    def _note(self, changes: list[dict[str, Any]]) -> None:
        """Publish task changes on the stream (and keep them for the parent session)."""
        for change in changes:
            self.publish(TaskChunkType.PROGRESS, change, metadata={"task_uuid": change.get("task_uuid")})
        if self._config.parent_session:
            self._relay_changes += [c for c in changes if "task_id" in c]

    async def _relay(self) -> None:
        """Tell the session that started this graph what changed and what waits for a person."""
        if not self._config.parent_session:
            return
        pending = view.pending_interactions(self._state)
        ids = [request.interaction_id for request in pending]
        if not (self._relay_changes or self._relay_decided or ids != self._relayed_ids):
            return
        message = GraphProgress(
            graph_workflow_id=self.owner_id,
            changes=self._relay_changes,
            pending=pending,
            decided=self._relay_decided,
        )
        self._relay_changes, self._relay_decided, self._relayed_ids = [], [], ids
        try:
            await workflow.get_external_workflow_handle(self._config.parent_session).signal(
                GRAPH_PROGRESS, message
            )
        except Exception as err:  # the session has closed
            workflow.logger.info(
                "session %s did not take the graph's progress: %s", self._config.parent_session, err
            )

    # ----------------------------------------------------------------- runs

    async def _start(self, run: Run) -> None:
        task = self._state.tasks[run.task_uuid]
        version = current(task)
        assert version is not None
        child_id = task_run_workflow_id(self.owner_id, run.task_uuid, run.version, run.instance)
        if run.instance is None:
            version.workflow_id = child_id
        else:
            version.instances[run.instance].workflow_id = child_id
            version.workflow_id = child_id.rsplit(":i", 1)[0]
        child = run_input(self.owner_id, self._config, self._state, run, self._state.agents)
        self._told_paused[child_id] = child.paused
        self._starting.add(child_id)
        try:
            handle = await workflow.start_child_workflow(
                AgentTaskWorkflow.run,
                child,
                id=child_id,
                parent_close_policy=ParentClosePolicy.ABANDON,
                priority=Priority(priority_key=1) if high_priority(task) else Priority.default,
                static_summary=f"task {task.task_id} v{run.version}"
                + (f" #{run.instance}" if run.instance is not None else "")
                + f" of graph {self._config.graph_id} ({agent_id_of(version.assignee_id, child.agent)})",
            )
            waiter = asyncio.create_task(self._await_run(handle, run))
            self._awaiting.add(waiter)
            waiter.add_done_callback(self._awaiting.discard)
        except Exception as err:  # e.g. the id is taken: the run fails, the graph goes on
            self._record(
                TaskReport(
                    task_uuid=run.task_uuid,
                    version=run.version,
                    instance=run.instance,
                    status="failed",
                    error=f"the task run could not start: {err}",
                )
            )
        finally:
            self._starting.discard(child_id)

    async def _await_run(self, handle: ChildWorkflowHandle[Any, TaskReport], run: Run) -> None:
        """Take a run's report when it ends (a run this graph run started; see `report_to_graph`)."""
        try:
            report = await handle
        except ChildWorkflowError as err:
            cancelled = isinstance(err.cause, CancelledError)
            report = TaskReport(
                task_uuid=run.task_uuid,
                version=run.version,
                instance=run.instance,
                status="cancelled" if cancelled else "failed",
                error="cancelled" if cancelled else f"the task run ended: {err.cause or err}",
            )
        self._record(report)

    def _running_ids(self) -> list[str]:
        return [run for task in self._state.tasks.values() for run in task_interventions.running_runs(task)]

    def _paused_for(self, run_id: str) -> bool:
        task_uuid = run_id.split(":task:", 1)[1].split(":", 1)[0]
        task = self._state.tasks.get(task_uuid)
        return self._state.paused or (task is not None and task.paused)

    async def _tell_pauses(self) -> None:
        """Pause or resume running task runs whose graph or task was paused or resumed."""
        self._graph_paused = self._state.paused
        for run_id in self._running_ids():
            want = self._paused_for(run_id)
            if self._told_paused.get(run_id, False) != want:
                self._told_paused[run_id] = want
                await self._signal_run(run_id, "pause" if want else "resume", SessionControl(reason="graph"))

    async def _signal_run(self, run_id: str, signal: str, *arguments: Any) -> None:
        try:
            await workflow.get_external_workflow_handle(run_id).signal(signal, args=arguments)
        except Exception as err:  # the run has ended meanwhile
            workflow.logger.info("task run %s did not take %s: %s", run_id, signal, err)

    async def _cancel_runs(self, run_ids: list[str]) -> None:
        """Ask runs to cancel (a run still starting is asked once it has started)."""
        await workflow.wait_condition(lambda: not self._starting.intersection(run_ids))
        for run_id in run_ids:
            try:
                await workflow.get_external_workflow_handle(run_id).cancel()
            except Exception as err:  # the run has ended meanwhile
                workflow.logger.info("task run %s could not be cancelled: %s", run_id, err)

    # ----------------------------------------------------------------- reports

    @workflow.signal(name=TASK_FINISHED)
    def task_finished(self, report: TaskReport) -> None:
        """A task run ended (completed, failed or cancelled)."""
        self._record(report)

    def _record(self, report: TaskReport) -> None:
        run_id = task_run_workflow_id(self.owner_id, report.task_uuid, report.version, report.instance)
        self._state.task_pending.pop(run_id, None)
        if run_id in self._state.cancelling:
            self._state.cancelling.remove(run_id)
        self._told_paused.pop(run_id, None)
        progress = Progress()
        task = self._scheduler.record(report, progress)
        if task is not None and report.plan is not None:
            principal = report.agent_id or "agent"
            self._plans.append((task, BlueprintChange(blueprint=report.plan, principal=principal)))
        self._note(progress.changes)
        self._dirty = True

    @workflow.signal(name=TASK_INTERACTIONS)
    def task_interactions(self, told: TaskInteractions) -> None:
        """A task run's pending interactions changed (a tool approval opened or was decided)."""
        known = self._state.task_pending.get(told.workflow_id)
        before = {r.interaction_id for r in known.pending} if known else set()
        if told.pending:
            self._state.task_pending[told.workflow_id] = told
        else:
            self._state.task_pending.pop(told.workflow_id, None)
        self._relay_decided += told.decided
        self._dirty = True
        for request in told.pending:
            if request.interaction_id not in before:
                self.publish(
                    TaskChunkType.TOOL_APPROVAL_REQUEST,
                    request.content,
                    metadata=approvals.announced(request, task_uuid=told.task_uuid),
                )
        self._show()

    # ----------------------------------------------------------------- gates

    async def _gate(self, task_uuid: str) -> None:
        task = self._state.tasks[task_uuid]
        gate = gate_of(task) or {}
        request = self._supervisor.open(
            InteractionType.CONFIRMATION,
            "gate",
            {
                "prompt": gate.get("prompt") or f"Run task {task.task_id!r}?",
                "task_id": task.task_id,
                "task_uuid": task.task_uuid,
                "assignee_id": task.next_assignee_id or task.definition.assignee_id,
                "input_data": task.next_input,
                "summary": f"gate of task {task.task_id}",
            },
            approvers=gate.get("approvers") or None,
            timeout_seconds=gate.get("timeout_seconds"),
            chunk=TaskChunkType.PENDING,
            metadata={"task_uuid": task.task_uuid, "task_id": task.task_id},
        )
        task.gate_interaction = request.interaction_id
        self._dirty = True
        await self._await_gate(task, request.interaction_id, request)

    async def _await_gate(
        self, task: GraphTask, interaction_id: str, request: InteractionRequest | None
    ) -> None:
        """Wait for the gate's decision (`request` None: it was decided already) and apply it."""
        if request is not None:
            outcome = await self._supervisor.wait_for(request)
        else:
            outcome = self._state.decided[interaction_id]
        self._supervisor.settle(interaction_id)
        if task.status != TaskStatus.WAITING or task.gate_interaction != interaction_id:
            return  # rolled back (or cancelled) while it waited
        task.gate_interaction = None
        progress = Progress()
        how = "timed out" if outcome.decided_by == Principal.TIMEOUT else f"denied by {outcome.decided_by}"
        if outcome.approved:
            self._scheduler.set_status(task, TaskStatus.READY, f"confirmed by {outcome.decided_by}", progress)
        elif has_goto(task):
            self._scheduler.fail(task, f"its gate was {how}", progress)
        else:
            self._scheduler.skip(task, f"its gate was {how}", progress)
        self._relay_decided.append(outcome)
        self._note(progress.changes)
        self._dirty = True

    def _rearm_gates(self) -> None:
        """After continue-as-new: wait again for the gates that were open, apply those decided
        meanwhile (a decision may reach the new run before this), open those not yet opened."""
        for task in self._state.tasks.values():
            if task.status != TaskStatus.WAITING:
                continue
            gate = task.gate_interaction
            request = next((r for r in self._state.pending if r.interaction_id == gate), None)
            if gate is not None and (request is not None or gate in self._state.decided):
                asyncio.create_task(self._await_gate(task, gate, request))  # noqa: RUF006
            else:
                asyncio.create_task(self._gate(task.task_uuid))  # noqa: RUF006

    # ----------------------------------------------------------------- blueprints

    async def _accept(self, change: BlueprintChange) -> dict[str, str]:
        """Add a blueprint to the graph (every check, assignees resolved); blueprint id → UUID."""
        state = self._state
        missing = [
            a for a in assignees_of(change.blueprint) if a not in state.agents and a not in change.agents
        ]
        agents = dict(change.agents)
        if missing:
            found = await workflow.execute_local_activity(
                RESOLVE_AGENTS,
                AgentLookup(assignee_ids=missing, key=self._config.graph_id),
                result_type=AgentLookupResult,
                start_to_close_timeout=RESOLVE_TIMEOUT,
                retry_policy=RESOLVE_RETRY,
                summary=f"resolve {', '.join(missing)}",
            )
            if found.unknown:
                raise ApplicationError(
                    "; ".join(f"assignee {a!r}: {why}" for a, why in found.unknown.items()),
                    type=ErrorType.BLUEPRINT_REFUSED,
                    non_retryable=True,
                )
            agents.update(found.agents)
        try:
            added = expand(
                change.blueprint,
                tasks=state.tasks,
                edges=state.edges,
                new_id=lambda local: change.task_uuids.get(local) or str(workflow.uuid4()),
                next_edge=state.next_edge,
                principal=change.principal,
                conditions=self._conditions,
            )
        except BlueprintRefused as err:
            raise ApplicationError(str(err), type=ErrorType.BLUEPRINT_REFUSED, non_retryable=True) from err
        state.agents.update(agents)
        for task in added.tasks:
            state.tasks[task.task_uuid] = task
            state.order.append(task.task_uuid)
        state.edges += added.edges
        state.next_edge += len(added.edges)
        progress = Progress()
        for update in added.updates:
            task = state.tasks[str(update.task_id)]
            if update.new_input_data is not None:
                task.definition = task.definition.model_copy(update={"input_data": update.new_input_data})
            if update.new_status is not None:
                status = UPDATABLE_STATUS[update.new_status.lower()]
                self._scheduler.set_status(task, status, f"{status} by {change.principal}'s plan", progress)
        self._scheduler.mark_goto_targets()
        self._audit(
            "extended",
            change.principal,
            f"{len(added.tasks)} tasks, {len(added.edges)} edges, {len(added.updates)} updates",
        )
        self.publish(
            TaskChunkType.PROGRESS,
            {"extended_by": change.principal, "tasks": added.ids, "edges": len(added.edges)},
        )
        self._dirty = True
        return added.ids

    async def _take_plans(self) -> None:
        """Extend the graph with the plans its agents proposed (a refused plan is shown, not fatal)."""
        while self._plans:
            task, change = self._plans.pop(0)
            try:
                await self._accept(change)
            except ApplicationError as err:
                task.reason = f"its plan was refused: {err.message}"
                self._audit("plan_refused", change.principal, err.message)
                self.publish(TaskChunkType.ERROR, {"task_id": task.task_id, "error": task.reason})

    @workflow.update
    async def extend(self, change: BlueprintChange) -> GraphView:
        """Add tasks and edges, or update tasks that have not started (`BlueprintRefused` otherwise)."""
        await self._accept(change)
        return self._view(GraphQuery())

    @extend.validator
    def _validate_extend(self, change: BlueprintChange) -> None:
        self._interventions.check_open()
        try:
            expand(
                change.blueprint,
                tasks=self._state.tasks,
                edges=self._state.edges,
                new_id=lambda local: f"check-{local}",
                next_edge=self._state.next_edge,
                principal=change.principal,
                conditions=self._conditions,
            )
        except BlueprintRefused as err:
            raise ApplicationError(str(err), type=ErrorType.BLUEPRINT_REFUSED, non_retryable=True) from err

    # ----------------------------------------------------------------- interventions

    @workflow.update
    async def intervene_checked(self, request: GraphIntervention) -> GraphView:
        """PAUSE, RESUME or ROLLBACK_AND_MODIFY one task; answers once it is done (see validator)."""
        await self._intervene(request)
        return self._view(GraphQuery())

    @intervene_checked.validator
    def _validate_intervene(self, request: GraphIntervention) -> None:
        self._interventions.check_open()
        task_interventions.check(self._state, request)

    @workflow.signal
    async def intervene(self, request: GraphIntervention) -> None:
        """Signal twin of `intervene_checked`: a refused intervention is audited, not raised."""
        try:
            self._interventions.check_open()
            task_interventions.check(self._state, request)
        except ApplicationError as err:
            self._audit("rejected", request.principal, f"{request.intervention_type}: {err.message}")
            return
        await self._intervene(request)

    async def _intervene(self, request: GraphIntervention) -> None:
        task = task_interventions.check(self._state, request)
        kind = request.intervention_type
        self._audit(
            kind.lower(), request.principal, f"task {task.task_id!r}: {request.comment}", request.channel
        )
        if kind in ("PAUSE", "RESUME"):
            task_interventions.set_paused(task, kind == "PAUSE")
            self.publish(
                TaskChunkType.PROGRESS,
                {
                    "task_id": task.task_id,
                    "task_uuid": task.task_uuid,
                    "paused": task.paused,
                    "by": request.principal,
                },
            )
            self._dirty = True
            return
        if request.new_assignee_id and request.new_assignee_id not in self._state.agents:
            found = await workflow.execute_local_activity(
                RESOLVE_AGENTS,
                AgentLookup(assignee_ids=[request.new_assignee_id], key=self._config.graph_id),
                result_type=AgentLookupResult,
                start_to_close_timeout=RESOLVE_TIMEOUT,
                retry_policy=RESOLVE_RETRY,
                summary=f"resolve {request.new_assignee_id}",
            )
            if found.unknown:
                raise ApplicationError(
                    found.unknown[request.new_assignee_id], type=ErrorType.UNKNOWN_AGENT, non_retryable=True
                )
            self._state.agents.update(found.agents)
        affected = [task.task_uuid, *self._scheduler.descendants(task.task_uuid)]
        cancel, gates = task_interventions.rollback(self._scheduler, task, request, workflow.now())
        for interaction_id in gates:
            self._supervisor.withdraw(
                interaction_id, Principal.ROLLBACK, f"task rolled back by {request.principal}"
            )
        self.publish(
            TaskChunkType.PROGRESS,
            {
                "task_id": task.task_id,
                "task_uuid": task.task_uuid,
                "rolled_back_by": request.principal,
                "next_version": len(task.versions) + 1,
                "reset": [self._state.tasks[u].task_id for u in affected[1:]],
            },
        )
        await self._cancel_runs(cancel)
        try:
            await workflow.wait_condition(
                lambda: not any(run in self._state.cancelling for run in cancel), timeout=CANCEL_WAIT
            )
        except TimeoutError:
            self._audit("rollback_went_on", "system", f"runs did not end within {CANCEL_WAIT}: {cancel}")
        self._state.cancelling = [run for run in self._state.cancelling if run not in cancel]
        self._state.holds = [uuid for uuid in self._state.holds if uuid not in affected]
        await self._act(self._scheduler.advance())  # re-dispatch now: the answer shows the new version
        self._dirty = True

    # ----------------------------------------------------------------- whole graph

    @workflow.update
    def pause_checked(self, control: SessionControl) -> GraphView:
        """Update twin of `pause`: start nothing new, hold running tasks at their next safe point."""
        self._interventions.pause(control)
        self._dirty = True
        return self._view(GraphQuery())

    @pause_checked.validator
    def _validate_pause(self, control: SessionControl) -> None:
        self._interventions.check_pause()

    @workflow.update
    def resume_checked(self, control: SessionControl) -> GraphView:
        """Update twin of `resume`."""
        self._interventions.resume(control)
        self._dirty = True
        return self._view(GraphQuery())

    @resume_checked.validator
    def _validate_resume(self, control: SessionControl) -> None:
        self._interventions.check_resume()

    @workflow.update
    async def cancel_checked(self, control: SessionControl) -> GraphView:
        """Update twin of `cancel`: cancels every running task; answers once the graph has closed."""
        self._interventions.cancel(control)
        await workflow.wait_condition(lambda: self._state.status == GraphStatus.CANCELLED)
        return self._view(GraphQuery())

    @cancel_checked.validator
    def _validate_cancel(self, control: SessionControl) -> None:
        self._interventions.check_open()

    async def _close(self) -> None:
        state = self._state
        progress = Progress()
        if state.cancelled:
            running = self._running_ids()
            state.cancelling = sorted({*state.cancelling, *running})
            await self._cancel_runs(running)
            try:
                await workflow.wait_condition(lambda: not state.cancelling, timeout=CANCEL_WAIT)
            except TimeoutError:
                pass
            for task in state.tasks.values():
                if task.status not in (TaskStatus.COMPLETED, TaskStatus.FAILED, TaskStatus.SKIPPED):
                    task.status, task.reason = TaskStatus.CANCELLED, state.cancel_reason or state.reason
            state.status = GraphStatus.CANCELLED
            state.reason = state.reason or state.cancel_reason
        else:
            for task in state.tasks.values():
                if task.goto_only and task.status == TaskStatus.PENDING:
                    self._scheduler.skip(task, "no failure led here (on_failure GOTO target)", progress)
            failed = self._scheduler.failed_unhandled()
            state.status = GraphStatus.FAILED if failed else GraphStatus.COMPLETED
            if failed:
                state.reason = "; ".join(f"{t.task_id}: {t.reason}" for t in failed[:10])
        state.finished_at = workflow.now()
        self._note(progress.changes)
        await self._relay()
        self._show()
        self.publish(
            TaskChunkType.CANCELLED if state.status == GraphStatus.CANCELLED else TaskChunkType.COMPLETE,
            {
                "status": state.status,
                "reason": state.reason,
                "outputs": view.sink_outputs(state, state.order[:100]),
            },
            is_final=True,
        )
        self._chunks.close()

    # ----------------------------------------------------------------- continue-as-new

    def _continue_as_new_due(self) -> bool:
        info = workflow.info()
        return info.is_continue_as_new_suggested() or info.get_current_history_length() >= self._cas_after

    async def _continue_as_new(self) -> None:
        await workflow.wait_condition(workflow.all_handlers_finished)
        for run_id in self._running_ids():  # the next run cannot await them: they must signal
            await self._signal_run(run_id, REPORT_TO_GRAPH)
        snapshot = self._chunks.snapshot()
        up_to = await archive_stream(self.owner_id, self._state, snapshot, kept=STREAM_KEPT, page=STREAM_PAGE)
        self._chunks.truncate(up_to)
        await self._chunks.continue_as_new(
            lambda stream: [
                GraphRunInput(
                    config=self._config,
                    state=self._state,
                    stream=stream,
                    continue_as_new_after_events=self._cas_after,
                )
            ]
        )

    # ----------------------------------------------------------------- watchers, queries

    @workflow.update
    async def watch(self, request: WatchRequest) -> WatchResult:
        """Long-poll the graph's chunks from `request.next_offset` on (as sessions' `watch`)."""
        return await self._chunks.watch.wait(request)

    @watch.validator
    def _validate_watch(self, request: WatchRequest) -> None:
        self._chunks.watch.check(request)

    @workflow.query
    def get_state(self, query: GraphQuery) -> GraphView:
        """The graph with one page of its tasks."""
        return self._view(query)

    @workflow.query
    def get_task(self, task_uuid: str) -> GraphTask | None:
        """One task with every version it ran (None: no such task)."""
        return self._state.tasks.get(task_uuid)

    @workflow.query
    def get_diagram(self) -> str:
        """The graph as a Mermaid flowchart, each task with its status."""
        return view.mermaid(self._state)

    @workflow.query
    def get_pending(self) -> list[InteractionRequest]:
        """Gates of the graph and tool approvals inside its tasks, waiting for a person."""
        return view.pending_interactions(self._state)

    @workflow.query
    def find_interaction(self, interaction_id: str) -> str | None:
        """The workflow an interaction of this graph belongs to (the graph for gates, a task run for
        tool approvals; decided ones too), or None when it is not this graph's."""
        state = self._state
        if interaction_id in state.decided or any(r.interaction_id == interaction_id for r in state.pending):
            return self.owner_id
        for told in state.task_pending.values():
            if any(r.interaction_id == interaction_id for r in told.pending):
                return told.workflow_id
        run = run_of_interaction(interaction_id)
        if run is None:
            return None
        uuid8, version, instance = run
        task = next((t for t in state.tasks.values() if t.task_uuid.startswith(uuid8)), None)
        if task is None or not 1 <= version <= len(task.versions):
            return None
        return task_run_workflow_id(self.owner_id, task.task_uuid, version, instance)

    @workflow.query
    def get_audit(self) -> list[AuditEntry]:
        """Extensions, interventions and gate decisions, oldest first."""
        return list(self._state.audit)

    @workflow.query
    def get_archive(self, kind: str) -> ArchiveCursor:
        """Where the archived part of the stream is (`kind` = "stream")."""
        return self._state.stream_archive if kind == "stream" else ArchiveCursor()

    def _view(self, query: GraphQuery) -> GraphView:
        return view.graph_view(self.owner_id, self._config, self._state, query)

    # ----------------------------------------------------------------- audit, Web UI

    def _audit(self, kind: str, principal: str, comment: str, channel: str = "system") -> None:
        self._state.audit.append(
            AuditEntry(kind=kind, at=workflow.now(), principal=principal, channel=channel, comment=comment)
        )

    def _show(self, _status: str = "") -> None:
        """Upsert the search attributes when the status or the number of waiting requests changed."""
        shown = (view.graph_status(self._state).value, len(view.pending_interactions(self._state)))
        if shown != self._shown:
            self._shown = shown
            workflow.upsert_search_attributes(view.search_attributes(self._config, self._state))
        self._refresh()

    def _refresh(self) -> None:
        workflow.set_current_details(view.details_markdown(self.owner_id, self._config, self._state))
