"""The buttons of an approval card, in every chat channel: what a click asks for, and its value.

A button sends back `{"action": "approve" | "deny" | "approve_session", "session_key",
"interaction_id", "workflow_id"}`: Lark as the button's callback `value`, DingTalk as the
template button's callback `params`. `parse_card_action` reads it back; anything else is not
one of Synapse's buttons.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final, Literal

APPROVE: Final = "approve"
DENY: Final = "deny"
APPROVE_FOR_SESSION: Final = "approve_session"
"""Approve, and grant the same call for the rest of the session (`response_data.grant = "session"`)."""
Action = Literal["approve", "deny", "approve_session"]


@dataclass(frozen=True)
class CardAction:
    """What an Approve/Deny click asks for."""

    action: Action
    session_key: str
    interaction_id: str
    workflow_id: str | None = None
    """The workflow that asked (a graph or its task run, relayed by the session); None: the session."""

    @property
    def approved(self) -> bool:
        """Whether the click approves."""
        return self.action in (APPROVE, APPROVE_FOR_SESSION)

    @property
    def grant(self) -> str | None:
        """`session` when the button was "Approve for this session"."""
        return "session" if self.action == APPROVE_FOR_SESSION else None


def button_value(action: Action, session_key: str, interaction_id: str, workflow_id: str) -> dict[str, str]:
    """The value a button sends back: `{"action", "session_key", "interaction_id", "workflow_id"}`."""
    return {
        "action": action,
        "session_key": session_key,
        "interaction_id": interaction_id,
        "workflow_id": workflow_id,
    }


def parse_card_action(value: Any) -> CardAction | None:
    """A button value from a card callback, or None when it is not one of our buttons."""
    if not isinstance(value, dict):
        return None
    action, key, interaction_id = value.get("action"), value.get("session_key"), value.get("interaction_id")
    if (
        action not in (APPROVE, DENY, APPROVE_FOR_SESSION)
        or not isinstance(key, str)
        or not key
        or not isinstance(interaction_id, str)
        or not interaction_id
    ):
        return None
    workflow_id = value.get("workflow_id")
    return CardAction(
        action=action,
        session_key=key,
        interaction_id=interaction_id,
        workflow_id=workflow_id if isinstance(workflow_id, str) and workflow_id else None,
    )
