"""Supervision of one workflow run, wired once in `@workflow.init`.

`Supervisor` binds the parts to the run's state and surface: `requests` (asking people),
`decisions` (taking their decisions in), `grants` (standing approvals), `rules` (calls an
approval rule decided) and `interventions`
(pause, resume, cancel). A session, a graph and a graph task's run each build one; the handlers
they inherit (`handlers`) delegate to it, and a run that hosts the agent loop wraps it in
`agent.supervised.SupervisedHost`.
"""

from __future__ import annotations

from collections.abc import Callable

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from temporalio.contrib.workflow_streams import WorkflowStreamState

    from .state import SupervisedState

from ..stream.chunks import ChunkStream, Publish
from ..versioning import begin
from .decisions import Decisions
from .grants import Grants
from .interventions import Interventions
from .ports import Channel, Policy, Silent, Surface
from .requests import Requests
from .rules import RuleOutcomes


class Supervisor:
    """Requests, decisions, grants and interventions of one run, on its state."""

    def __init__(
        self,
        owner_id: str,
        name: str,
        state: SupervisedState,
        policy: Policy,
        surface: Surface,
        *,
        prefix: str = "",
    ) -> None:
        """Bind to the run's state (restored after continue-as-new) and its surface.

        `name` (e.g. "session 'abc'") is used in refusals; `prefix` starts every interaction id
        (graph task runs: unique within their graph).
        """
        self.owner_id = owner_id
        self.state = state
        self.policy = policy
        self.surface = surface
        self.publish = surface.publish
        self.grants = Grants(state, surface, prefix=prefix)
        self.rules = RuleOutcomes(state, prefix=prefix)
        self.decisions = Decisions(state, surface, self.grants)
        self.requests = Requests(owner_id, state, policy, surface, self.decisions, prefix=prefix)
        self.interventions = Interventions(name, state, surface)


def supervise(
    owner_id: str,
    name: str,
    state: SupervisedState,
    policy: Policy,
    *,
    stream: WorkflowStreamState | None,
    show_status: Callable[[str], None],
    refresh: Callable[[], None],
    channel: Callable[[Publish], Channel] | None = None,
    prefix: str = "",
    generation: int | None = None,
) -> tuple[ChunkStream, Supervisor]:
    """The wiring every supervised run does in `@workflow.init`: its chunk stream (continued from
    `stream`), the surface supervision reaches people through (`channel` is made from the stream's
    publish; none: `Silent`), and its `Supervisor`. It first decides the run's changes
    (`versioning.begin`: by the `generation` its input says, else by markers), before the run
    can await anything."""
    begin(generation)
    chunks = ChunkStream(owner_id, state, stream)
    surface = Surface(
        publish=chunks.publish,
        channel=channel(chunks.publish) if channel else Silent(),
        show_status=show_status,
        refresh=refresh,
    )
    return chunks, Supervisor(owner_id, name, state, policy, surface, prefix=prefix)
