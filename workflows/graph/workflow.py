"""TaskGraphWorkflow: a PlanBlueprint being executed (`graph:<uuid>`).

The graph accepts its blueprint (`plans`: assignees resolved, every check of
`blueprint.expand`), then loops: the scheduler decides what runs, asks, skips or fails; ready runs
start together, as many per workflow task as its payload budget allows (`budget`), as
`AgentTaskWorkflow` children (`children`); gates ask a
person (`gates`); runs report back by signal. Agents' plans and `extend` grow the graph while it
runs; `intervene` pauses, resumes or rolls back a task (`rollbacks`); `pause`/`resume`/`cancel`
act on the whole graph; a parent session hears of it all (`relay`). It continues-as-new with its
state when history grows, without losing running children (ABANDON children that signal the
graph's workflow id) or open gates (re-armed). This module keeps the run loop and the handlers
of reports and blueprints (interventions' are in `interventions`, continue-as-new in `lifecycle`);
every status change is the scheduler's.

Determinism: no I/O, ids from `workflow.uuid4()`, time from `workflow.now()`; a change to the
commands issued here is gated (`workflows/versioning`; recorded graph histories replay).
"""

from __future__ import annotations

import asyncio

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from contracts import (
        BlueprintChange,
        EdgeChanged,
        GraphQuery,
        GraphView,
        InteractionOutcome,
        RequestOpened,
        TaskChanged,
        TaskInteractions,
        TaskReport,
    )
    from contracts.names import TASK_FINISHED, TASK_INTERACTIONS

    from .state import GraphRunInput, GraphState

from ..identity.ids import task_run_workflow_id
from ..supervision.handlers import ControlHandlers, StreamHandlers, SupervisionHandlers
from ..supervision.ports import Policy
from ..supervision.relayed import DecisionRelay
from ..supervision.supervisor import supervise
from . import view
from .cel import Conditions
from .children import Children
from .failsafe import answered_as_failure
from .gates import Gates
from .interventions import InterventionHandlers, TaskInterventions
from .lifecycle import Lifecycle
from .metrics import TaskCounter
from .plans import Plans
from .queries import GraphQueries
from .relay import Relay
from .rollbacks import Rollbacks
from .rules import Progress, Scheduler
from .rules.progress import OPEN_TASK
from .run import GraphRun
from .whole_outputs import read_whole


@workflow.defn
class TaskGraphWorkflow(
    SupervisionHandlers, ControlHandlers, StreamHandlers, InterventionHandlers, GraphQueries
):
    """A blueprint's tasks run by their assignees, supervised, extendable and intervenable."""

    @workflow.init
    def __init__(self, input: GraphRunInput) -> None:
        """Restore or create state; register the stream (must happen in `__init__`)."""
        self._config = input.config
        self._cas_after = input.continue_as_new_after_events
        now = workflow.now()
        self._state = input.state or GraphState(created_at=now, last_activity=now)
        self._web_ui = view.WebUI(self.owner_id, self._config, self._state)
        self._task_counter = TaskCounter(self._state)
        policy = Policy(
            timeout_seconds=self._config.approval_timeout_seconds,
            approvers=list(self._config.approvers),
            channel=self._config.channel,
        )
        name = f"graph {self._config.graph_id}"
        self._chunks, self._supervisor = supervise(
            self.owner_id,
            name,
            self._state,
            policy,
            stream=input.stream,
            show_status=self._show,
            refresh=self._web_ui.refresh,
            generation=input.generation,
        )
        self.publish = self._chunks.publish
        self._supervisor.requests.requester = self._config.requested_by
        self._supervisor.decisions.elsewhere = lambda interaction_id: view.asker_of(
            self._state, interaction_id
        )
        self._supervisor.decisions.relay = DecisionRelay(self.owner_id)
        self._interventions = self._supervisor.interventions
        self._scheduler = Scheduler(
            self._state, Conditions(), workflow.now, max_running=self._config.max_running_tasks
        )
        run = GraphRun(self.owner_id, self._config, self._state, self._chunks, self._scheduler)
        self._relay = Relay(run)
        self._children = Children(run, self._record)
        self._gates = Gates(run, self._supervisor, self._gate_decided)
        self._plans = Plans(run, self._changed)
        self._rollbacks = Rollbacks(run, self._children, self._gates, self._act, self._step)
        self._tasks = TaskInterventions(run, self._rollbacks)
        self._lifecycle = Lifecycle(
            run,
            self._cas_after,
            self._children,
            self._plans,
            self._relay,
            note=self._note,
            show=self._show,
            intervene=self._intervene,
        )
        self._cancel_later: list[str] = []
        """Runs to cancel that a signal or a gate's decision found (a GOTO reset them)."""
        self._dirty = True

    # ----------------------------------------------------------------- run

    @workflow.run
    async def run(self, input: GraphRunInput) -> GraphView:
        """Run the graph until every task has finished, or it is cancelled."""
        state = self._state
        if input.blueprint is not None and not state.order:
            change = BlueprintChange(
                blueprint=input.blueprint,
                principal=self._config.requested_by,
                channel=self._config.channel,
                agents=input.agents,
                task_uuids=input.task_uuids,
            )
            if not await self._lifecycle.accept_first(change):
                return self._view(GraphQuery())
        self._gates.rearm()
        if input.reopening is not None:
            await self._lifecycle.reopen(input.reopening)
        self._show()
        try:
            await self._run_tasks()
        except asyncio.CancelledError:  # cancelled in Temporal (the Web UI, `temporal workflow cancel`)
            state.cancelled = True
            state.cancel_reason = state.cancel_reason or "the workflow was cancelled in Temporal"
        await self._lifecycle.close()
        await workflow.wait_condition(workflow.all_handlers_finished)
        return self._view(GraphQuery())

    async def _run_tasks(self) -> None:
        """The graph's loop: advance, start, relay, wait; until every task has finished, or a cancel."""
        state = self._state
        while not state.cancelled:
            self._dirty = False  # before any await: what arrives meanwhile marks it again
            await self._plans.take()
            await self._step()
            await self._relay.send()
            if self._scheduler.finished() and not self._plans.queued:
                break
            if self._lifecycle.continue_as_new_due() and not self._plans.queued:
                await self._lifecycle.continue_as_new()
            await workflow.wait_condition(self._needs_attention)

    def _needs_attention(self) -> bool:
        """Something to do: a report, a plan, an intervention, a pause or resume of the graph."""
        return self._dirty or self._state.cancelled or self._children.pause_changed()

    async def _step(self) -> None:
        """Read the whole outputs the next decisions need, apply the rules, act on them. A loop that
        ended with offloaded instance outputs holds what follows until they are read, in a next round."""
        progress = Progress()
        while True:
            await read_whole(self._scheduler, self._state, progress)
            self._scheduler.advance(progress)
            if not self._scheduler.unread():
                break
        await self._act(progress)

    async def _act(self, progress: Progress) -> None:
        """Publish what changed, withdraw and open gates, cancel what must stop, start what is
        ready, in one go."""
        self._note(progress.changes)
        self._gates.withdraw(progress.withdraw, "its task was reset, updated or ended")
        self._gates.open(progress.gates)
        cancel, self._cancel_later = [*self._cancel_later, *progress.cancel], []
        await self._children.cancel(cancel)
        await self._children.start(progress.runs)
        await self._children.tell_pauses()
        if progress.changes or progress.runs:
            self._state.last_activity = workflow.now()
            self._show()

    def _note(self, changes: list[TaskChanged | EdgeChanged]) -> None:
        """Publish status changes on the stream (and keep them for the parent session)."""
        for change in changes:
            self.publish(change)
        self._relay.changed(changes)

    def _changed(self, progress: Progress) -> None:
        """Something outside the run loop changed tasks (a report, a gate's decision, a plan): note
        it and withdraw gates now; the run loop cancels what must stop and starts what is ready."""
        self._note(progress.changes)
        self._gates.withdraw(progress.withdraw, "its task was reset, updated or ended")
        self._cancel_later += progress.cancel
        self._dirty = True

    def _gate_decided(self, outcome: InteractionOutcome | None, progress: Progress) -> None:
        if outcome is not None:
            self._relay.decided([outcome])
        self._changed(progress)

    # ----------------------------------------------------------------- reports

    @workflow.signal(name=TASK_FINISHED)
    def task_finished(self, report: TaskReport) -> None:
        """A task run ended (completed, failed or cancelled)."""
        self._record(report)

    def _record(self, report: TaskReport) -> None:
        try:
            self._apply_report(report)
        except Exception as err:  # a report that cannot be applied fails its task, never the graph
            workflow.logger.exception("report of task %s v%s not applied", report.task_uuid, report.version)
            self._fail(report.task_uuid, f"its run's report could not be applied: {err!r}")

    def _fail(self, task_uuid: str, reason: str) -> None:
        """Fail one task for an unexpected error (if it is still open)."""
        task = self._state.tasks.get(task_uuid)
        if task is not None and task.status in OPEN_TASK:
            progress = Progress()
            self._scheduler.outcomes.fail(task, reason, progress)
            self._changed(progress)

    def _apply_report(self, report: TaskReport) -> None:
        run_id = task_run_workflow_id(self.owner_id, report.task_uuid, report.version, report.instance)
        self._state.task_pending.pop(run_id, None)
        if run_id in self._state.cancelling:
            self._state.cancelling.remove(run_id)
        self._children.ended(run_id)
        progress = Progress()
        task = self._scheduler.record(report, progress)
        if task is not None and report.plan is not None:
            principal = report.agent_id or "agent"
            self._plans.queued.append((task, BlueprintChange(blueprint=report.plan, principal=principal)))
        self._changed(progress)

    @workflow.signal(name=TASK_INTERACTIONS)
    def task_interactions(self, told: TaskInteractions) -> None:
        """A task run's pending interactions changed (a tool approval opened or was decided)."""
        new = self._children.interactions(told)
        self._relay.decided(told.decided)
        self._dirty = True
        for request in new:
            self.publish(RequestOpened(request=request, task_uuid=told.task_uuid))
        self._show()

    # ----------------------------------------------------------------- blueprints

    @workflow.update
    async def extend(self, change: BlueprintChange) -> GraphView:
        """Add tasks and edges, or update tasks that have not started (`BlueprintRefused` otherwise)."""
        with answered_as_failure("the blueprint"):
            await self._plans.accept(change)
        return self._view(GraphQuery())

    @extend.validator
    def _validate_extend(self, change: BlueprintChange) -> None:
        self._interventions.check_open()
        self._plans.check(change)

    # ----------------------------------------------------------------- whole graph

    def _controlled(self) -> GraphView:
        self._dirty = True
        return self._view(GraphQuery())

    def _view(self, query: GraphQuery) -> GraphView:
        return view.graph_view(self.owner_id, self._config, self._state, query)

    # ----------------------------------------------------------------- audit, Web UI

    def _show(self, _status: str = "") -> None:
        self._web_ui.show()
        self._task_counter.count()
