"""Who the API takes a caller for (`GET /me`), and the roles every door checks."""

from __future__ import annotations

from enum import StrEnum

from pydantic import Field

from .base import Contract
from .principals import PersonId


class Role(StrEnum):
    """Roles in increasing order of power; each may do what the ones below may.

    Compared by that order (`Role.operator < Role.approver`), never as text."""

    viewer = "viewer"
    """Reads sessions, graphs, audits and rules."""
    operator = "operator"
    """Also talks to agents, starts sessions and graphs, pauses, resumes and cancels them."""
    approver = "approver"
    """Also decides: approves, denies, answers, grants; saves rules of a project or a person."""
    admin = "admin"
    """Also what widens the deployment's floor: global rules, a wider sandbox, another person's rules."""

    @property
    def rank(self) -> int:
        """Its place in the order, from 0 (viewer)."""
        return list(Role).index(self)

    def __lt__(self, other: str) -> bool:
        return self.rank < Role(other).rank

    def __le__(self, other: str) -> bool:
        return self.rank <= Role(other).rank

    def __gt__(self, other: str) -> bool:
        return self.rank > Role(other).rank

    def __ge__(self, other: str) -> bool:
        return self.rank >= Role(other).rank


class CallerView(Contract):
    """Answer of `GET /me`: the principal and role the caller's key gives, so a client shows only
    the actions it may take."""

    principal: PersonId | None = Field(
        default=None, description="The key's principal; None when the API is open."
    )
    role: Role = Field(description="`viewer`, `operator`, `approver` or `admin` (`admin` when open).")
    keys_required: bool = Field(description="Whether the API asks every caller for a key.")
    projects: list[str] | None = Field(
        default=None,
        description="The projects the key is scoped to (it reaches only their sessions, graphs, rules, "
        "artifacts and audit); None: every project.",
    )
