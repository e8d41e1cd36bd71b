"""How a graph run opens and ends: a refused blueprint, a reopening, continue-as-new, and the close.

A graph whose first blueprint is refused ends at once, FAILED, saying why. A closed graph given a
change (`Reopening`: a rollback or a blueprint, checked by the API against its final state) opens
again in its next run: audited with who and why, then the change is applied; one refused now is
audited and the graph ends again. At the close, a cancelled graph cancels its runs in flight
(waiting `CANCEL_WAIT` for them) and marks what did not finish; otherwise handlers no failure led
to are skipped, and the graph is COMPLETED, or FAILED naming the failures no GOTO took up. Either
way the end is relayed, shown, and the stream's final chunk carries the outputs. A run whose history
has grown continues as new with its state and stream (older chunks archived), its runs in flight
told to report by signal.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from temporalio import workflow
from temporalio.exceptions import ApplicationError

with workflow.unsafe.imports_passed_through():
    from contracts import (
        AuditKind,
        BlueprintChange,
        EdgeChanged,
        GraphCancelled,
        GraphChanged,
        GraphFinished,
        GraphIntervention,
        GraphRefused,
        GraphStatus,
        TaskChanged,
    )

    from .state import GraphRunInput, Reopening

from ..stream.archive import archive_stream
from ..supervision.audit import audit
from ..versioning import GENERATION
from . import view
from .children import Children
from .interventions import check
from .plans import Plans
from .relay import Relay
from .rollbacks import CANCEL_WAIT
from .rules import Progress
from .run import GraphRun

STREAM_KEPT = 1000
"""Chunks the stream carries into the next run; older ones are archived (SSE still reads them)."""
STREAM_PAGE = 500


class Lifecycle:
    """The opening and the end of one graph run."""

    def __init__(
        self,
        run: GraphRun,
        cas_after: int,
        children: Children,
        plans: Plans,
        relay: Relay,
        *,
        note: Callable[[list[TaskChanged | EdgeChanged]], None],
        show: Callable[[], None],
        intervene: Callable[[GraphIntervention], Awaitable[None]],
    ) -> None:
        self._owner_id = run.owner_id
        self._config = run.config
        self._state = run.state
        self._scheduler = run.scheduler
        self._cas_after = cas_after
        self._children = children
        self._plans = plans
        self._relay = relay
        self._chunks = run.chunks
        self._note = note
        self._show = show
        self._intervene = intervene

    async def accept_first(self, change: BlueprintChange) -> bool:
        """Accept the graph's first blueprint; False when it was refused (the graph has ended)."""
        state = self._state
        try:
            await self._plans.accept(change)
        except ApplicationError as err:
            state.status, state.reason = GraphStatus.FAILED, f"the blueprint was refused: {err.message}"
            state.finished_at = workflow.now()
            self._show()
            self._chunks.publish(GraphRefused(status=state.status, reason=state.reason))
            self._chunks.close()
            return False
        return True

    async def reopen(self, reopening: Reopening) -> None:
        """A closed graph's next run: open again, audited, with the change a person asked for."""
        state = self._state
        state.status, state.reason, state.finished_at = GraphStatus.RUNNING, None, None
        audit(
            state.audit,
            AuditKind.REOPENED,
            reopening.principal,
            channel="http",
            comment=f"{reopening.reason} (after run {reopening.previous_run_id})",
        )
        self._chunks.publish(GraphChanged(change="reopened", by=reopening.principal, reason=reopening.reason))
        try:
            if reopening.intervention is not None:
                check(state, reopening.intervention)
                await self._intervene(reopening.intervention)
            if reopening.change is not None:
                await self._plans.accept(reopening.change)
        except ApplicationError as err:
            audit(
                state.audit,
                AuditKind.REJECTED,
                reopening.principal,
                channel="http",
                comment=f"the reopening change: {err.message}",
            )

    async def close(self) -> None:
        """End the run: cancelled, completed or failed (see the module docstring)."""
        state = self._state
        progress = Progress()
        if state.cancelled:
            await self._cancel_runs(progress)
            state.status = GraphStatus.CANCELLED
            state.reason = state.reason or state.cancel_reason
        else:
            self._scheduler.gotos.close(progress)
            failed = self._scheduler.failed_unhandled()
            state.status = GraphStatus.FAILED if failed else GraphStatus.COMPLETED
            if failed:
                state.reason = "; ".join(f"{t.task_id}: {t.reason}" for t in failed[:10])
        state.finished_at = workflow.now()
        self._note(progress.changes)
        await self._relay.send()
        self._show()
        ended = GraphCancelled if state.status == GraphStatus.CANCELLED else GraphFinished
        self._chunks.publish(
            ended(
                status=state.status, reason=state.reason, outputs=view.sink_outputs(state, state.order[:100])
            )
        )
        self._chunks.close()

    def continue_as_new_due(self) -> bool:
        """Temporal suggests it, or the history reached the configured length."""
        info = workflow.info()
        return info.is_continue_as_new_suggested() or info.get_current_history_length() >= self._cas_after

    async def continue_as_new(self) -> None:
        """Continue as new with the state and the recent stream (see the module docstring)."""
        await workflow.wait_condition(workflow.all_handlers_finished)
        await self._children.hand_over()
        snapshot = self._chunks.snapshot()
        up_to = await archive_stream(
            self._owner_id, self._state, snapshot, kept=STREAM_KEPT, page=STREAM_PAGE
        )
        self._chunks.truncate(up_to)
        await self._chunks.continue_as_new(
            lambda stream: [
                GraphRunInput(
                    config=self._config,
                    state=self._state,
                    stream=stream,
                    continue_as_new_after_events=self._cas_after,
                    generation=GENERATION,
                )
            ]
        )

    async def _cancel_runs(self, progress: Progress) -> None:
        """Cancel every run in flight, wait for them (up to `CANCEL_WAIT`), mark what did not finish
        (each an event on the stream)."""
        state = self._state
        running = self._children.running_ids()
        state.cancelling = sorted({*state.cancelling, *running})
        await self._children.cancel(running)
        try:
            await workflow.wait_condition(lambda: not state.cancelling, timeout=CANCEL_WAIT)
        except TimeoutError:
            pass
        self._scheduler.outcomes.cancel_open(state.cancel_reason or state.reason, progress)
