"""API keys and roles: viewer < operator < approver < admin.

With `SYNAPSE_API_KEYS` unset the API is open (local use): every caller is an admin and
names itself with the body's `principal` field. With it set, each request needs
`Authorization: Bearer <key>`; the key decides who the caller is and what it may do.

The setting holds keys' SHA-256 digests, `sha256:<hex>:principal:role` (`synapse keys new`
makes a key and prints its entry), so reading the configuration does not give a key away. A
`key:principal:role` entry (the key in clear) still works; the API warns at start.

An entry may end with `:projects=shop,billing`: the key is then scoped to those projects (it sees
and acts only on their sessions, graphs, rules, artifacts, experience and audit). Entries are
comma-separated too, so a comma-separated part without any `:` continues the project list of the
entry before it (a key's entry always has `:`); `+` separates projects as well
(`projects=shop+billing`). A project name has no `:`, `,`, `+`, `=`, quote, backslash or blank. Without `projects=`
a key keeps every project.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from collections.abc import Sequence
from dataclasses import dataclass

from contracts import Role as Role  # the API's dependencies name roles from here too
from contracts import person

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
        """Whether the caller may see or work in what belongs to `project`: an unscoped caller in
        every project and in none; a scoped one only in its projects, never in what has no project
        (the experience index's rule, kept everywhere)."""
        return self.projects is None or (project is not None and project in self.projects)

    @property
    def scoped(self) -> bool:
        """Whether the key names projects (and so reaches only theirs)."""
        return self.projects is not None


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


PROJECTS = "projects="
"""How an entry's last part names the projects its key is scoped to."""
_PROJECT = re.compile(r"^[^:,+=\s'\"\\]{1,1000}$")


def _entries(spec: str) -> list[list[str]]:
    """The `:`-separated parts of each non-empty comma-separated entry; a comma-separated part
    without `:` after an entry that names projects continues its `projects=` list."""
    entries: list[list[str]] = []
    for part in (p.strip() for p in spec.split(",")):
        if not part:
            continue
        if ":" not in part and entries and entries[-1][-1].startswith(PROJECTS):
            entries[-1][-1] += f"+{part}"
        else:
            entries.append(part.split(":"))
    return entries


def keys_in_clear(spec: str) -> list[str]:
    """What every entry not of the `sha256:` form holds first: its key, for the logs to redact (a
    malformed entry's too; digests are no secret)."""
    return [parts[0] for parts in _entries(spec) if parts[0] and parts[0] != DIGEST]


def _projects(position: int, part: str) -> frozenset[str]:
    """The projects `projects=a+b` (or `projects=a,b`) names; ValueError for a malformed list."""
    if not part.startswith(PROJECTS):
        raise ValueError(
            f"SYNAPSE_API_KEYS entry {position}: its last part {part.split('=')[0]!r}= is not "
            "`projects=<name>[,<name>...]`"
        )
    names = part.removeprefix(PROJECTS).split("+")
    if bad := [name for name in names if not _PROJECT.match(name)]:
        raise ValueError(
            f"SYNAPSE_API_KEYS entry {position}: project name(s) {', '.join(map(repr, bad))} in "
            "`projects=`: give names of 1-1000 characters without `:`, `,`, `+`, `=`, quotes, backslashes or blanks"
        )
    return frozenset(names)


def parse_api_keys(spec: str) -> ApiKeys:
    """Parse `sha256:<hex>:principal:role` (or `key:principal:role`) entries, comma-separated,
    each optionally ending `:projects=a,b` (or `:projects=a+b`): a key scoped to those projects.

    Raises:
        ValueError: An entry is malformed or names an unknown role; the message says which
            (never the key).
    """
    keys: dict[str, Caller] = {}
    in_clear = 0
    for position, parts in enumerate(_entries(spec), start=1):
        projects = None
        if len(parts) > 3 and "=" in parts[-1]:  # no key, principal or role holds `=`
            projects = _projects(position, parts.pop())
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
                f"`key:principal:role`, optionally ending `:projects=<name>[,<name>...]` "
                f"(got {len(parts)} part(s) before any projects)"
            )
        if not principal or not parts[0]:
            raise ValueError(f"SYNAPSE_API_KEYS entry {position} has an empty key or principal")
        if role not in Role.__members__:
            raise ValueError(
                f"SYNAPSE_API_KEYS entry {position} has role {role!r}; expected one of "
                f"{', '.join(Role.__members__)}"
            )
        keys[digest] = Caller(principal=person(principal), role=Role[role], projects=projects)
    return ApiKeys(keys, in_clear)


def new_key(principal: str, role: str, projects: Sequence[str] = ()) -> tuple[str, str]:
    """A new random key and its `SYNAPSE_API_KEYS` entry (`sha256:<hex>:principal:role`, ending
    `:projects=a+b` when scoped to `projects`)."""
    if role not in Role.__members__:
        raise ValueError(f"role {role!r}; expected one of {', '.join(Role.__members__)}")
    if not principal or ":" in principal or "," in principal:
        raise ValueError(f"principal {principal!r}: give a name without `:` or `,`")
    if bad := [name for name in projects if not _PROJECT.match(name)]:
        raise ValueError(
            f"project(s) {', '.join(map(repr, bad))}: give names without `:`, `,`, `+`, `=`, quotes, backslashes or blanks"
        )
    key = f"syn_{secrets.token_urlsafe(32)}"
    scope = f":{PROJECTS}{'+'.join(sorted(set(projects)))}" if projects else ""
    return key, f"{DIGEST}:{digest_of(key)}:{principal}:{role}{scope}"
