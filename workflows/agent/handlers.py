"""The handlers of a run that hosts the agent loop (a session, a graph task's run), beside the
supervision handlers every supervised run has: its grants (`get_grants`, `revoke_grant`), the
output of a tool while it runs (`tool_outputs`), and what a running MCP tool's
server asks the person (`elicit`, answered through `get_elicitation`). A graph runs no tools and
grants nothing, so it has none of these. The workflow sets `_supervisor` and `_host` in its
`@workflow.init`. Their names are part of the workflows' public interface (clients, recorded
histories): never rename one.
"""

from __future__ import annotations

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from contracts import (
        Elicitation,
        ElicitationAnswer,
        Grant,
        GrantRevocation,
        ToolOutput,
        ToolOutputBatch,
    )
    from contracts.names import ELICIT, GET_ELICITATION, TOOL_OUTPUTS

from ..supervision.supervisor import Supervisor
from .outputs import output_event
from .supervised import SupervisedHost


class AgentRunHandlers:
    """`get_grants`, `revoke_grant`, `tool_outputs`, `elicit`, `get_elicitation`."""

    _supervisor: Supervisor
    _host: SupervisedHost

    @workflow.signal(name=ELICIT)
    async def elicit(self, asked: Elicitation) -> None:
        """An MCP server asks the person something while its tool runs: a question on every
        channel; the answer is kept for the tool (`get_elicitation`)."""
        await self._host.elicit(asked)

    @workflow.query(name=GET_ELICITATION)
    def get_elicitation(self, elicitation_id: str) -> ElicitationAnswer | None:
        """The person's answer to an elicitation (None until there is one)."""
        return self._host.elicitation(elicitation_id)

    @workflow.query
    def get_grants(self) -> list[Grant]:
        """Every grant made here, in force and revoked, oldest first."""
        return list(self._supervisor.state.grants)

    @workflow.update
    def revoke_grant(self, revocation: GrantRevocation) -> Grant:
        """Revoke a grant: later matching calls are asked for again (audited).

        Rejected before history: unknown grant (`GrantNotFound`), already revoked (`GrantAlreadyRevoked`).
        """
        return self._supervisor.grants.revoke(revocation)

    @revoke_grant.validator
    def _validate_revoke(self, revocation: GrantRevocation) -> None:
        self._supervisor.grants.check_revocation(revocation)

    @workflow.signal(name=TOOL_OUTPUTS)
    def tool_outputs(self, batch: ToolOutputBatch) -> None:
        """Several chunks of a running tool's output, in order (one signal per batch)."""
        for output in batch.outputs:
            self._show_output(output)

    def _show_output(self, output: ToolOutput) -> None:
        self._supervisor.publish(output_event(output))
