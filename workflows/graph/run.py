"""What every part of one graph run is bound to, made once in `@workflow.init`."""

from __future__ import annotations

from dataclasses import dataclass

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from contracts import GraphConfig

    from .state import GraphState

from ..stream.chunks import ChunkStream
from .rules import Scheduler


@dataclass(frozen=True)
class GraphRun:
    """The graph's workflow id, config, state (restored after continue-as-new), stream and rules."""

    owner_id: str
    config: GraphConfig
    state: GraphState
    chunks: ChunkStream
    scheduler: Scheduler
