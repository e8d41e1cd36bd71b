"""Grants: an approval that also allows later matching calls for the rest of a session."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import Field

from .base import Contract
from .principals import PersonId
from .sandbox import SandboxProfile

ASK_USER = "ask_user"
"""The built-in tool every agent may call to ask the person a question (a USER_INPUT interaction)."""


class GrantScope(StrEnum):
    """What later calls a grant allows (`InteractionDecision.response_data.grant`)."""

    SESSION = "session"
    """The same tool with the same arguments."""
    SESSION_PREFIX = "session_prefix"
    """The same tool and the same command head (`sql`: statement kind and table, e.g. `DELETE orders`)."""


class Grant(Contract):
    """A standing approval, made by a person while approving one call; revocable."""

    grant_id: str = Field(description="Id within the session, e.g. `grant_1`.")
    scope: GrantScope = Field(description="What it allows.")
    tool_id: str = Field(description="The tool it allows.")
    arguments: dict[str, Any] | None = Field(
        default=None, description="Scope `session`: the exact arguments allowed."
    )
    head: str | None = Field(
        default=None, description="Scope `session_prefix`: the command head allowed, e.g. `DELETE orders`."
    )
    summary: str = Field(description="The call that was approved with it, on one line.")
    granted_by: PersonId = Field(description="Who granted it.")
    channel: str = Field(description="Where it was granted: http, lark, ...")
    granted_at: datetime = Field(description="When (workflow time, UTC).")
    interaction_id: str = Field(description="The approval that made it.")
    sandbox: SandboxProfile | None = Field(
        default=None, description="The sandbox chosen with that approval: the calls it allows run there too."
    )
    uses: int = Field(default=0, description="Calls it has allowed since.")
    revoked_by: PersonId | None = Field(default=None, description="Who revoked it (None: in force).")
    revoked_at: datetime | None = Field(default=None, description="When it was revoked.")


class GrantList(Contract):
    """Answer of `GET /sessions/{key}/grants`: every grant of the session, oldest first."""

    workflow_id: str = Field(description="The session's workflow id.")
    grants: list[Grant] = Field(default_factory=list, description="In force and revoked.")


class GrantRevocation(Contract):
    """Input of the `revoke_grant` update (`DELETE /sessions/{key}/grants/{grant_id}`)."""

    grant_id: str = Field(description="The grant to revoke.")
    principal: PersonId | None = Field(default=None, description="Who revokes it.")
    channel: str = Field(default="http", description="Where from.")
    reason: str | None = Field(default=None, description="Why; recorded in the audit.")
