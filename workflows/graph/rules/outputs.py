"""Tasks' whole outputs, as conditions, data flow and loops read them.

An answer past the inline limit is offloaded to the artifact store; the state keeps only its
preview (a loop instance's too: the loop's output is then read instance by instance). `needed` lists the offloaded outputs something still has to read whole (an edge waiting
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


def output_key(task_uuid: str, version: int, instance: int | None = None) -> str:
    """How `Outputs.whole` names one version's output (or one loop instance's)."""
    return f"{task_uuid}:v{version}" + (f":i{instance}" if instance is not None else "")


class Outputs:
    """The whole outputs of one graph's tasks."""

    def __init__(self, state: GraphState) -> None:
        self.state = state
        self.whole: dict[str, Any] = {}
        """Whole outputs of offloaded answers (`output_key` → value), read by the workflow."""

    def of(self, task: GraphTask) -> Any:
        """The task's current output, whole (an offloaded answer as the workflow read it back; a
        loop's: its instances' outputs, each whole)."""
        version = current(task)
        if version is None:
            return None
        if version.artifact is not None:
            return self.whole.get(output_key(task.task_uuid, version.version), version.output)
        if version.status == TaskStatus.COMPLETED and any(i.artifact for i in version.instances):
            return [
                self.whole.get(output_key(task.task_uuid, version.version, i.index), i.output)
                if i.artifact is not None
                else i.output
                for i in version.instances
            ]
        return version.output

    def unread(self, task: GraphTask) -> bool:
        """Whether the task's output has offloaded parts still to be read whole (a loop's
        instances): what reads it waits for the workflow to read them."""
        return bool(self._instance_parts(task))

    def needed(self) -> list[tuple[str, ArtifactRef]]:
        """Offloaded outputs something still needs whole (an edge to resolve, a loop to start), not
        read yet: (`output_key`, the artifact)."""
        needed = []
        for uuid in self._sources():
            version = current(self.state.tasks[uuid])
            if version is None or version.status != TaskStatus.COMPLETED or version.artifact is None:
                continue
            key = output_key(uuid, version.version)
            if key not in self.whole:
                needed.append((key, version.artifact))
        return needed + self.needed_instances()

    def needed_instances(self) -> list[tuple[str, ArtifactRef]]:
        """The part of `needed` that is loops' instance outputs."""
        return [part for uuid in self._sources() for part in self._instance_parts(self.state.tasks[uuid])]

    def _instance_parts(self, task: GraphTask) -> list[tuple[str, ArtifactRef]]:
        """A completed loop's offloaded instance outputs not read yet."""
        version = current(task)
        if task.status != TaskStatus.COMPLETED or version is None or version.status != TaskStatus.COMPLETED:
            return []  # (one whose output could not be read has failed)
        keys = [(output_key(task.task_uuid, version.version, i.index), i.artifact) for i in version.instances]
        return [(key, ref) for key, ref in keys if ref is not None and key not in self.whole]

    def _sources(self) -> list[str]:
        """Tasks whose output something still reads: sources of waiting edges, and of loops to start
        (in a fixed order: the reads are commands)."""
        state = self.state
        sources = dict.fromkeys(edge.source for edge in state.edges if edge.status == EdgeStatus.WAITING)
        for task in state.tasks.values():
            loop = loop_of(task)
            if loop is not None and task.status in (TaskStatus.PENDING, TaskStatus.READY, TaskStatus.WAITING):
                source = task_by_local(state, loop.input_source_task_id)
                sources.update(dict.fromkeys([source.task_uuid] if source else []))
        return list(sources)
