"""Tasks' whole outputs, as conditions, data flow and loops read them.

An answer past the inline limit is offloaded to the artifact store; the state keeps only its
preview. `needed` lists the offloaded outputs something still has to read whole (an edge waiting
to resolve, a loop about to start); the workflow reads them (the `read_output` local activity) into
`whole` before the rules advance, and `of` then answers with the whole value, never the preview.
`whole` is not part of the state: after continue-as-new it is read again when needed.
"""

from __future__ import annotations

from typing import Any

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from contracts import ArtifactRef, EdgeStatus, GraphTask, TaskStatus

    from ..state import GraphState

from .loops import loop_of
from .progress import current, task_by_local


def output_key(task_uuid: str, version: int) -> str:
    """How `Outputs.whole` names one version's output."""
    return f"{task_uuid}:v{version}"


class Outputs:
    """The whole outputs of one graph's tasks."""

    def __init__(self, state: GraphState) -> None:
        self.state = state
        self.whole: dict[str, Any] = {}
        """Whole outputs of offloaded answers (`output_key` → value), read by the workflow."""

    def of(self, task: GraphTask) -> Any:
        """The task's current output, whole (an offloaded answer as the workflow read it back)."""
        version = current(task)
        if version is None:
            return None
        if version.artifact is not None:
            return self.whole.get(output_key(task.task_uuid, version.version), version.output)
        return version.output

    def needed(self) -> list[tuple[str, ArtifactRef]]:
        """Offloaded outputs something still needs whole (an edge to resolve, a loop to start), not
        read yet: (`output_key`, the artifact)."""
        state = self.state
        sources = {edge.source for edge in state.edges if edge.status == EdgeStatus.WAITING}
        for task in state.tasks.values():
            loop = loop_of(task)
            if loop is not None and task.status in (TaskStatus.PENDING, TaskStatus.READY, TaskStatus.WAITING):
                source = task_by_local(state, loop.input_source_task_id)
                sources.update([source.task_uuid] if source else [])
        needed = []
        for uuid in sources:
            version = current(state.tasks[uuid])
            if version is None or version.artifact is None or version.status != TaskStatus.COMPLETED:
                continue
            key = output_key(uuid, version.version)
            if key not in self.whole:
                needed.append((key, version.artifact))
        return needed
