"""What every part of one graph run is bound to, made once in `@workflow.init`."""

from __future__ import annotations

from dataclasses import dataclass, field

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from contracts import GraphConfig

    from .state import GraphState

from ..stream.chunks import ChunkStream
from .budget import PayloadBudget
from .rules import Scheduler


@dataclass(frozen=True)
class GraphRun:
    """The graph's workflow id, config, state (restored after continue-as-new), stream and rules,
    and the payload budget its commands to other workflows share (`budget`)."""

    owner_id: str
    config: GraphConfig
    state: GraphState
    chunks: ChunkStream
    scheduler: Scheduler
    budget: PayloadBudget = field(default_factory=PayloadBudget)
