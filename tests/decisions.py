"""Decisions as the tests send them straight to a workflow (`decide_checked` / `decide`), the way
the API makes them: typed, with the decider's role (an approver unless a test says otherwise)."""

from __future__ import annotations

from typing import Any

from contracts import Answer, Decision, DecisionSource, Role, Said, Verdict


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
    data = response_data or {}
    unknown = set(data) - {"text", "arguments", "grant", "sandbox"}
    assert not unknown, f"response_data takes text, arguments, grant and sandbox, not {sorted(unknown)}"
    said: Said = (
        Answer(text=data["text"])
        if "text" in data and approved
        else Verdict(
            approved=approved,
            edit=data.get("arguments"),
            grant=data.get("grant"),
            sandbox=data.get("sandbox"),
        )
    )
    return Decision(
        interaction_id=interaction_id,
        principal=principal,
        role=role,
        channel=channel,
        source=source or (DecisionSource.HTTP if channel == "http" else DecisionSource.CLICK),
        said=said,
        comment=user_message,
    )
