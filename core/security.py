"""API keys and roles: viewer < operator < approver < admin.

With `SYNAPSE_API_KEYS` unset the API is open (local use): every caller is an admin and
names itself with the body's `principal` field. With it set, each request needs
`Authorization: Bearer <key>`; the key decides who the caller is and what it may do.

The setting holds keys' SHA-256 digests, `sha256:<hex>:principal:role` (`synapse keys new`
makes a key and prints its entry), so reading the configuration does not give a key away. A
`key:principal:role` entry (the key in clear) still works; the API warns at start.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from dataclasses import dataclass

from contracts import Role as Role  # the API's dependencies name roles from here too

DIGEST = "sha256"
_HEX = re.compile(r"^[0-9a-f]{64}$")


@dataclass(frozen=True)
class Caller:
    """Who is calling, as established by the API key (or not, when auth is off)."""

    principal: str | None
    role: Role
    projects: frozenset[str] | None = None
    """The projects the caller may act in (None: every project)."""

    def may_act_in(self, project: str | None) -> bool:
        """Whether the caller may work in `project` (no project: anyone may)."""
        return project is None or self.projects is None or project in self.projects


OPEN_ACCESS = Caller(principal=None, role=Role.admin)


def digest_of(key: str) -> str:
    """The hex SHA-256 of a key, as `SYNAPSE_API_KEYS` stores it."""
    return hashlib.sha256(key.encode()).hexdigest()


@dataclass(frozen=True)
class ApiKeys:
    """The callers by their key's digest; `in_clear` counts entries that hold the key itself."""

    by_digest: dict[str, Caller]
    in_clear: int = 0

    def caller(self, key: str) -> Caller | None:
        """Who presents `key`, or None for an unknown key."""
        return self.by_digest.get(digest_of(key))


def _entries(spec: str) -> list[list[str]]:
    """The `:`-separated parts of each non-empty comma-separated entry."""
    return [entry.split(":") for entry in (e.strip() for e in spec.split(",")) if entry]


def keys_in_clear(spec: str) -> list[str]:
    """What every entry not of the `sha256:` form holds first: its key, for the logs to redact (a
    malformed entry's too; digests are no secret)."""
    return [parts[0] for parts in _entries(spec) if parts[0] and parts[0] != DIGEST]


def parse_api_keys(spec: str) -> ApiKeys:
    """Parse `sha256:<hex>:principal:role` (or `key:principal:role`) entries, comma-separated.

    Raises:
        ValueError: An entry is malformed or names an unknown role; the message says which
            (never the key).
    """
    keys: dict[str, Caller] = {}
    in_clear = 0
    for position, parts in enumerate(_entries(spec), start=1):
        if parts[0] == DIGEST and len(parts) == 4:
            digest, principal, role = parts[1].lower(), parts[2], parts[3]
            if not _HEX.match(digest):
                raise ValueError(f"SYNAPSE_API_KEYS entry {position}: the sha256 digest is not 64 hex digits")
        elif len(parts) == 3:
            digest, principal, role = digest_of(parts[0]), parts[1], parts[2]
            in_clear += 1
        else:
            raise ValueError(
                f"SYNAPSE_API_KEYS entry {position} is not `sha256:<hex>:principal:role` or "
                f"`key:principal:role` (got {len(parts)} part(s))"
            )
        if not principal or not parts[0]:
            raise ValueError(f"SYNAPSE_API_KEYS entry {position} has an empty key or principal")
        if role not in Role.__members__:
            raise ValueError(
                f"SYNAPSE_API_KEYS entry {position} has role {role!r}; expected one of "
                f"{', '.join(Role.__members__)}"
            )
        keys[digest] = Caller(principal=principal, role=Role[role])
    return ApiKeys(keys, in_clear)


def new_key(principal: str, role: str) -> tuple[str, str]:
    """A new random key and its `SYNAPSE_API_KEYS` entry (`sha256:<hex>:principal:role`)."""
    if role not in Role.__members__:
        raise ValueError(f"role {role!r}; expected one of {', '.join(Role.__members__)}")
    if not principal or ":" in principal or "," in principal:
        raise ValueError(f"principal {principal!r}: give a name without `:` or `,`")
    key = f"syn_{secrets.token_urlsafe(32)}"
    return key, f"{DIGEST}:{digest_of(key)}:{principal}:{role}"
