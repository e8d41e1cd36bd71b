"""API keys and roles: viewer < operator < approver < admin.

With `SYNAPSE_API_KEYS` unset the API is open (local use): every caller is an admin and
names itself with the body's `principal` field. With it set, each request needs
`Authorization: Bearer <key>`; the key decides who the caller is and what it may do.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum


class Role(IntEnum):
    """Roles in increasing order of power; each may do what the ones below may."""

    viewer = 1
    operator = 2
    approver = 3
    admin = 4


@dataclass(frozen=True)
class Caller:
    """Who is calling, as established by the API key (or not, when auth is off)."""

    principal: str | None
    role: Role


OPEN_ACCESS = Caller(principal=None, role=Role.admin)


def parse_api_keys(spec: str) -> dict[str, Caller]:
    """Parse `key:principal:role,key2:principal2:role2` into a key -> caller map.

    Raises:
        ValueError: An entry is malformed or names an unknown role; the message says which.
    """
    keys: dict[str, Caller] = {}
    for position, entry in enumerate(filter(None, (e.strip() for e in spec.split(","))), start=1):
        parts = entry.split(":")
        if len(parts) != 3 or not all(parts):
            raise ValueError(
                f"SYNAPSE_API_KEYS entry {position} is not `key:principal:role` (got {len(parts)} part(s))"
            )
        key, principal, role = parts
        if role not in Role.__members__:
            raise ValueError(
                f"SYNAPSE_API_KEYS entry {position} has role {role!r}; expected one of "
                f"{', '.join(Role.__members__)}"
            )
        keys[key] = Caller(principal=principal, role=Role[role])
    return keys
