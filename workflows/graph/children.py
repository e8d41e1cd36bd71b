"""The graph's task runs: started as `AgentTaskWorkflow` children, awaited, cancelled, told of pauses.

Children are ABANDON children with ids derived from the graph's (`graph:<uuid>:task:<uuid>:v<n>`,
`:i<k>` for loop instances): a graph that continues-as-new leaves them running and asks them to
signal their report instead (`report_to_graph`). Every waiter is tracked; a run that cannot
start fails its task, never the graph.

Ready runs start together, within the graph's payload budget (`budget`): the starts that fit go
in one workflow task, the rest as earlier ones are confirmed; inputs over the inline size go by
reference (`by_reference`). Signals to many runs wait their turn in the same budget.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, Literal

from temporalio import workflow
from temporalio.common import Priority
from temporalio.exceptions import CancelledError, ChildWorkflowError
from temporalio.workflow import ChildWorkflowHandle, ParentClosePolicy

with workflow.unsafe.imports_passed_through():
    from contracts import InteractionRequest, SessionControl, TaskInteractions, TaskReport
    from contracts.names import REPORT_TO_GRAPH


from ..identity.ids import task_run_workflow_id
from .budget import encoded_size
from .by_reference import carried
from .rules.progress import Run, current, runs_of
from .run import GraphRun
from .run_inputs import agent_id_of, high_priority, run_input
from .task_run import AgentTaskWorkflow


class Children:
    """Start, await, cancel and signal the runs of one graph run."""

    def __init__(self, run: GraphRun, record: Callable[[TaskReport], None]) -> None:
        self._owner_id = run.owner_id
        self._config = run.config
        self._state = run.state
        self._budget = run.budget
        self._record = record
        self._starting: set[str] = set()
        """Runs whose start has been asked for but not confirmed (cancel them only once started)."""
        self._started: set[str] = set()
        """Runs this graph run started (their ends reach it as their completions)."""
        self._awaiting: set[asyncio.Task[None]] = set()
        self._told_paused: dict[str, bool] = {}
        self._graph_paused = run.state.paused

    def running_ids(self) -> list[str]:
        """Workflow ids of every run in flight."""
        return [run for task in self._state.tasks.values() for run in runs_of(task)]

    def pause_changed(self) -> bool:
        """The whole graph was paused or resumed since the runs were last told."""
        return self._state.paused != self._graph_paused

    def interactions(self, told: TaskInteractions) -> list[InteractionRequest]:
        """A run's pending interactions changed: kept (for the graph's view and its parent); the
        requests new since it last told."""
        known = self._state.task_pending.get(told.workflow_id)
        before = {r.interaction_id for r in known.pending} if known else set()
        if told.pending:
            self._state.task_pending[told.workflow_id] = told
        else:
            self._state.task_pending.pop(told.workflow_id, None)
        return [request for request in told.pending if request.interaction_id not in before]

    def ended(self, run_id: str) -> None:
        """A run reported its end."""
        self._told_paused.pop(run_id, None)

    async def start(self, runs: list[Run]) -> None:
        """Start runs together: as many in one workflow task as the payload budget allows, the rest
        as those are confirmed (in order); back once every start is confirmed or has failed."""
        if runs:
            await asyncio.gather(*(self._start(run) for run in runs))

    async def _start(self, run: Run) -> None:
        task = self._state.tasks[run.task_uuid]
        version = current(task)
        assert version is not None
        child_id = task_run_workflow_id(self._owner_id, run.task_uuid, run.version, run.instance)
        if run.instance is None:
            version.workflow_id = child_id
        else:
            version.instances[run.instance].workflow_id = child_id
            version.workflow_id = child_id.rsplit(":i", 1)[0]
        self._starting.add(child_id)
        taken = 0  # bytes admitted into the budget (every command counts some)
        try:
            child = run_input(self._owner_id, self._config, self._state, run, self._state.agents)
            child = await carried(child, self._config.inline_input_bytes)
            size = encoded_size(child)
            waited = await self._budget.admit(size)
            taken = size
            if waited:  # the graph or task may have been paused since
                child = child.model_copy(update={"paused": self._state.paused or task.paused})
            self._told_paused[child_id] = child.paused
            handle = await workflow.start_child_workflow(
                AgentTaskWorkflow.run,
                child,
                id=child_id,
                parent_close_policy=ParentClosePolicy.ABANDON,
                priority=Priority(priority_key=1) if high_priority(task) else Priority.default,
                static_summary=f"task {task.task_id} v{run.version}"
                + (f" #{run.instance}" if run.instance is not None else "")
                + f" of graph {self._config.graph_id} ({agent_id_of(child.agent_id, child.agent)})",
            )
            self._started.add(child_id)
            waiter = asyncio.create_task(self._await(handle, run))
            self._awaiting.add(waiter)
            waiter.add_done_callback(self._awaiting.discard)
        except Exception as err:  # e.g. the id is taken: the run fails, the graph goes on
            self._record(_report(run, "failed", f"the task run could not start: {err}"))
        finally:
            if taken:
                self._budget.give_back(taken)
            self._starting.discard(child_id)

    async def _await(self, handle: ChildWorkflowHandle[Any, TaskReport], run: Run) -> None:
        """Take a run's report when it ends (a run this graph run started; see `report_to_graph`)."""
        try:
            report = await handle
        except ChildWorkflowError as err:
            cancelled = isinstance(err.cause, CancelledError)
            error = "cancelled" if cancelled else f"the task run ended: {err.cause or err}"
            report = _report(run, "cancelled" if cancelled else "failed", error)
        self._record(report)

    async def tell_pauses(self) -> None:
        """Pause or resume running task runs whose graph or task was paused or resumed."""
        self._graph_paused = self._state.paused
        for run_id in self.running_ids():
            task = self._state.tasks.get(run_id.split(":task:", 1)[1].split(":", 1)[0])
            want = self._state.paused or (task is not None and task.paused)
            if self._told_paused.get(run_id, False) != want:
                self._told_paused[run_id] = want
                await self.signal(run_id, "pause" if want else "resume", SessionControl(reason="graph"))

    async def signal(self, run_id: str, signal: str, *arguments: Any) -> bool:
        """Signal a run, within the payload budget; whether it took the signal (one that has ended
        meanwhile is let go)."""
        size = encoded_size(*arguments)
        await self._budget.admit(size)
        try:
            await workflow.get_external_workflow_handle(run_id).signal(signal, args=arguments)
        except Exception as err:  # the run has ended meanwhile
            workflow.logger.info("task run %s did not take %s: %s", run_id, signal, err)
            return False
        finally:
            self._budget.give_back(size)
        return True

    async def cancel(self, run_ids: list[str]) -> None:
        """Ask runs to cancel (a run still starting is asked once it has started)."""
        if not run_ids:
            return
        await workflow.wait_condition(lambda: not self._starting.intersection(run_ids))
        for run_id in run_ids:
            try:
                await workflow.get_external_workflow_handle(run_id).cancel()
            except Exception as err:  # the run has ended meanwhile
                workflow.logger.info("task run %s could not be cancelled: %s", run_id, err)

    async def hand_over(self, *, together: bool) -> None:
        """Before continue-as-new: the next run cannot await these runs, so they must signal
        (`together`: every signal sent at once; else one after another, as graphs did before).

        A run that no longer takes the signal has ended without being told: its end reaches this
        graph run only as its child's completion, which Temporal records a little later (the
        signal's failure can come first). The next run would never hear of it, so this one waits
        for those reports before it goes (a run started by an earlier graph run was told then, and
        its report signal is recorded before it ends)."""
        running = self.running_ids()
        if together:
            taken = await asyncio.gather(*(self.signal(run_id, REPORT_TO_GRAPH) for run_id in running))
        else:
            taken = [await self.signal(run_id, REPORT_TO_GRAPH) for run_id in running]
        ended = {run_id for run_id, took in zip(running, taken, strict=True) if not took} & self._started
        if ended:
            await workflow.wait_condition(lambda: not ended.intersection(self.running_ids()))


def _report(run: Run, status: Literal["failed", "cancelled"], error: str) -> TaskReport:
    return TaskReport(
        task_uuid=run.task_uuid, version=run.version, instance=run.instance, status=status, error=error
    )
