"""Decisions as the tests send them straight to a workflow (`decide_checked` / `decide`), the way
the API makes them: typed, with the decider's role (an approver unless a test says otherwise)."""

from __future__ import annotations

from typing import Any

from contracts import Decision, DecisionSource, InteractionResponse, Role
from workflows.supervision.decisions import legacy


def decided(
    *,
    interaction_id: str,
    approved: bool = True,
    principal: str = "bob",
    channel: str = "http",
    role: Role | None = Role.approver,
    response_data: dict[str, Any] | None = None,
    user_message: str | None = None,
    source: DecisionSource | None = None,
) -> Decision:
    """A person's decision, said as an HTTP body says it (`response_data`: text, arguments, grant,
    sandbox), by `principal` with `role` through `channel`."""
    response = InteractionResponse(
        interaction_id=interaction_id,
        approved=approved,
        principal=principal,
        channel=channel,
        response_data=response_data,
        user_message=user_message,
    )
    made = legacy(response)
    return made.model_copy(update={"role": role, "source": source or made.source})
