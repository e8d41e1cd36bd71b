"""Graph-task metrics: how many tasks reached each status, counted by the graph workflow.

Emitted through `workflow.metric_meter()` like the approval metrics (`supervision/metrics.py`):
they issue no commands and are not emitted again while a history replays. The graph's rules are
pure engine code and know no meter; the workflow counts after each change it shows, comparing
every task's status with the one it counted last. A task that passes through a status between
two changes is counted at the one it is in when shown. A continued run starts from the statuses
its state carries, so nothing is counted twice.
"""

from __future__ import annotations

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from contracts import TaskStatus

    from .state import GraphState


class TaskCounter:
    """Counts `synapse_graph_tasks_total{status}` from one graph's state."""

    def __init__(self, state: GraphState) -> None:
        self._state = state
        self._counted: dict[str, TaskStatus] = {uuid: task.status for uuid, task in state.tasks.items()}

    def count(self) -> None:
        """Count each task whose status changed since the last count, by its status now."""
        changed = [task for uuid, task in self._state.tasks.items() if self._counted.get(uuid) != task.status]
        if not changed:
            return
        counter = workflow.metric_meter().create_counter(
            "synapse_graph_tasks", "Graph tasks reaching a status (added tasks: pending)."
        )
        for task in changed:
            self._counted[task.task_uuid] = task.status
            counter.add(1, {"status": task.status.value})
