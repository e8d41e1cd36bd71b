"""A task's `timeout_seconds` as seconds of work: the clock stops while the run is held."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

from temporalio import workflow


class WorkBudget:
    """The seconds of work a task run may spend: its clock stops while the run is held.

    `held()` says whether the run is held (paused, or waiting for a person). The budget runs
    down in stretches: each stretch of work is one durable timer for what is left, ended early
    when the run is held (the time it took, by `workflow.now()`, is spent) or done. While held,
    no timer runs. A pause stops the clock at once, although an agent step or tool run already
    in flight finishes first (the run holds before its next one).
    """

    def __init__(self, seconds: int, held: Callable[[], bool]) -> None:
        self._left = timedelta(seconds=seconds)
        self._held = held

    async def ran_out(self, done: Callable[[], bool]) -> bool:
        """Wait until `done()` holds (False) or the budget ran out first (True)."""
        while not done():
            if self._held():
                await workflow.wait_condition(lambda: done() or not self._held())
                continue
            if self._left <= timedelta(0):
                return True
            started = workflow.now()
            try:
                await workflow.wait_condition(lambda: done() or self._held(), timeout=self._left)
            except TimeoutError:
                self._left = timedelta(0)
                return True
            self._left -= workflow.now() - started
        return False
