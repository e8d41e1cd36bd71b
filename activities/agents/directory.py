"""The `resolve_agents` activity: graph assignees resolved to agent declarations.

A graph cannot read the agents file (workflow code does no I/O), so it asks this local activity,
run by a worker that loaded the registry at start. The declarations then travel in the graph's
state and in each task run's input, so history shows exactly which model ran each task.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from temporalio import activity

from contracts import AgentLookup, AgentLookupResult
from contracts.names import RESOLVE_AGENTS
from core.agent_registry import UnknownAssignee, load_registry
from core.settings import Settings


class AgentDirectory:
    """Lookups in the worker's agent registry."""

    def __init__(self, settings: Settings) -> None:
        self.registry = load_registry(settings)

    def activities(self) -> list[Callable[..., Any]]:
        """The bound activity methods, for `Worker(activities=...)`."""
        return [self.resolve_agents]

    @activity.defn(name=RESOLVE_AGENTS)
    async def resolve_agents(self, lookup: AgentLookup) -> AgentLookupResult:
        """Each assignee's declaration (a `hash` group picks by `lookup.key`), or why it is unknown."""
        result = AgentLookupResult()
        for assignee_id in lookup.assignee_ids:
            try:
                result.agents[assignee_id] = self.registry.resolve(assignee_id, lookup.key)
            except UnknownAssignee as err:
                result.unknown[assignee_id] = str(err)
        return result
