"""The queries of a graph: read-only views of its state, for the API, the CLI and the Web UI.

`TaskGraphWorkflow` inherits them (as it inherits the supervision handlers) and sets `_config`,
`_state` and `_cas_after` in its `@workflow.init`. Queries never change anything; their names are
part of the workflow's public interface: never rename one.
"""

from __future__ import annotations

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from contracts import (
        ArchiveCursor,
        AuditEntry,
        GraphConfig,
        GraphQuery,
        GraphTask,
        GraphView,
        InteractionRequest,
    )

    from .state import GraphRunInput, GraphState

from ..stream.chunks import ChunkStream
from . import view


class GraphQueries:
    """`get_state`, `get_run_input`, `get_task`, `get_diagram`, `get_pending`, `find_interaction`,
    `get_audit`, `get_archive`."""

    _config: GraphConfig
    _state: GraphState
    _cas_after: int
    _chunks: ChunkStream

    @property
    def owner_id(self) -> str:
        """This graph's workflow id."""
        return workflow.info().workflow_id

    @workflow.query
    def get_state(self, query: GraphQuery) -> GraphView:
        """The graph with one page of its tasks."""
        return view.graph_view(self.owner_id, self._config, self._state, query)

    @workflow.query
    def get_run_input(self) -> GraphRunInput:
        """What a next run starts from: the config, the whole state and the stream (a closed graph's
        are its final ones, from which it can be reopened: its events go on where they stopped)."""
        return GraphRunInput(
            config=self._config,
            state=self._state,
            stream=self._chunks.snapshot(),
            continue_as_new_after_events=self._cas_after,
        )

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
        return view.find_interaction(self.owner_id, self._state, interaction_id)

    @workflow.query
    def get_audit(self) -> list[AuditEntry]:
        """Extensions, interventions and gate decisions, oldest first."""
        return list(self._state.audit)

    @workflow.query
    def get_archive(self, kind: str) -> ArchiveCursor:
        """Where the archived part of the stream is (`kind` = "stream")."""
        return self._state.stream_archive if kind == "stream" else ArchiveCursor()
