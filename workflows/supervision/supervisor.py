"""Supervision of one workflow run, wired once in `@workflow.init`.

`Supervisor` binds the parts to the run's state and surface: `requests` (asking people),
`decisions` (taking their decisions in), `grants` (standing approvals) and `interventions`
(pause, resume, cancel). A session, a graph and a graph task's run each build one; the handlers
they inherit (`handlers`) delegate to it, and a run that hosts the agent loop wraps it in
`agent.supervised.SupervisedHost`.
"""

from __future__ import annotations

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from .state import SupervisedState

from .decisions import Decisions
from .grants import Grants
from .interventions import Interventions
from .ports import Policy, Surface
from .requests import Requests


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
        self.decisions = Decisions(state, surface, self.grants)
        self.requests = Requests(owner_id, state, policy, surface, self.decisions, prefix=prefix)
        self.interventions = Interventions(name, state, surface)
