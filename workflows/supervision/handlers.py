"""The decision and intervention handlers every supervised workflow exposes.

A workflow class inherits `SupervisionHandlers` and sets `_supervisor` and `_interventions` in
its `@workflow.init`; the handlers only delegate, so a session and a graph task answer the same
signals and updates in the same way. Their names are part of the workflows' public interface
(clients, recorded histories): never rename one.
"""

from __future__ import annotations

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from contracts import (
        Grant,
        GrantRevocation,
        InteractionOutcome,
        InteractionResponse,
        SessionControl,
        TaskChunkType,
        ToolOutput,
        ToolOutputBatch,
    )

from . import grants
from .interventions import Interventions
from .supervisor import Supervisor


class SupervisionHandlers:
    """`respond` / `respond_checked`, `pause`, `resume`, `cancel`, grants (`get_grants`, `revoke_grant`)."""

    _supervisor: Supervisor
    _interventions: Interventions

    @workflow.update
    async def respond_checked(self, response: InteractionResponse) -> InteractionOutcome:
        """Decide an interaction and answer once the approved tool ran (or the denial is recorded).

        Rejected before history by the validator: unknown interaction (`InteractionNotFound`),
        already decided (`InteractionAlreadyDecided`), principal not allowed (`ApproverNotAllowed`).
        """
        return await self._supervisor.respond_checked(response)

    @respond_checked.validator
    def _validate_respond(self, response: InteractionResponse) -> None:
        self._supervisor.check_response(response)

    @workflow.signal
    def respond(self, response: InteractionResponse) -> None:
        """Signal twin of `respond_checked`: an invalid decision is audited as rejected."""
        self._supervisor.respond(response)

    @workflow.signal
    def pause(self, control: SessionControl) -> None:
        """Start nothing new (no agent step, no tool run) until resumed."""
        self._interventions.pause(control)

    @workflow.signal
    def resume(self, control: SessionControl) -> None:
        """Let a paused run go on."""
        self._interventions.resume(control)

    @workflow.signal
    def cancel(self, control: SessionControl) -> None:
        """End the run: a pending approval is denied by `system:cancel`."""
        self._interventions.cancel(control)

    @workflow.query
    def get_grants(self) -> list[Grant]:
        """Every grant made here, in force and revoked, oldest first."""
        return list(self._supervisor.ledger.grants)

    @workflow.update
    def revoke_grant(self, revocation: GrantRevocation) -> Grant:
        """Revoke a grant: later matching calls are asked for again (audited).

        Rejected before history: unknown grant (`GrantNotFound`), already revoked (`GrantAlreadyRevoked`).
        """
        return self._supervisor.revoke_grant(revocation)

    @revoke_grant.validator
    def _validate_revoke(self, revocation: GrantRevocation) -> None:
        grants.check_revocation(self._supervisor.ledger, revocation)

    @workflow.signal(name="tool_output")
    def tool_output(self, output: ToolOutput) -> None:
        """Output of a tool while it runs (a terminal command), shown on the stream as its chunk type.

        Metadata: seed 004's for the type, plus `interaction_id`, `source_tool` (the tool running) and
        `streaming`; `tool_name` is the tool running too, except on `tool_use`, where it is the tool
        an agent CLI in the terminal uses. Kept for runs that send one signal per chunk.
        """
        self._show_output(output)

    @workflow.signal(name="tool_outputs")
    def tool_outputs(self, batch: ToolOutputBatch) -> None:
        """Several chunks of a running tool's output, in order (one signal per batch)."""
        for output in batch.outputs:
            self._show_output(output)

    def _show_output(self, output: ToolOutput) -> None:
        self._supervisor.publish(
            TaskChunkType(output.chunk_type),
            output.text,
            metadata={
                "tool_name": output.tool_id,
                **output.metadata,
                "interaction_id": output.interaction_id,
                "source_tool": output.tool_id,
                "streaming": True,
            },
        )
