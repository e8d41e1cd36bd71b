"""Profiles (seed 003): named sets of approval rules and settings a session can take.

- `default`: the tools' own policies and the saved rules.
- `restricted`: every call a tool would ask for (a write, a command not known to be read-only) is
  denied, and approved commands run in the read-only sandbox.
- `enterprise`: every call is asked for, the ones a tool would run freely too.

A profile's rules are global rules of that session, added to the saved ones; its sandbox is the
session's default when it names none.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from contracts import ANY_TOOL_RULE, ApprovalRule, RuleDecision, RuleMatch, RuleScope, SandboxProfile

DEFAULT_PROFILE = "default"
SINCE = datetime(2026, 11, 25, tzinfo=UTC)
"""When the built-in profiles' rules were made (they are part of the code)."""


@dataclass(frozen=True)
class Profile:
    """A named set of rules and settings."""

    name: str
    description: str
    rules: tuple[ApprovalRule, ...] = ()
    sandbox: SandboxProfile | None = None


def _rule(profile: str, n: int, decision: RuleDecision, match: RuleMatch, reason: str) -> ApprovalRule:
    return ApprovalRule(
        rule_id=f"profile:{profile}:{n}",
        tool=ANY_TOOL_RULE,
        match=match,
        decision=decision,
        scope=RuleScope.GLOBAL,
        reason=reason,
        created_by=f"profile:{profile}",
        created_at=SINCE,
    )


PROFILES: dict[str, Profile] = {
    profile.name: profile
    for profile in (
        Profile(DEFAULT_PROFILE, "the tools' own policies and the saved rules"),
        Profile(
            "restricted",
            "every write is denied; approved commands run read-only",
            (
                _rule(
                    "restricted",
                    1,
                    RuleDecision.DENY,
                    RuleMatch(writes=True),
                    "the restricted profile denies every write",
                ),
            ),
            SandboxProfile.READ_ONLY,
        ),
        Profile(
            "enterprise",
            "every call is asked for",
            (
                _rule(
                    "enterprise",
                    1,
                    RuleDecision.ASK,
                    RuleMatch(),
                    "the enterprise profile asks for every call",
                ),
            ),
        ),
    )
}


def profile_named(name: str | None) -> Profile:
    """The profile `name` (None: `default`); `KeyError` naming the known ones otherwise."""
    key = name or DEFAULT_PROFILE
    if key not in PROFILES:
        raise KeyError(f"profile {key!r} does not exist; known: {', '.join(PROFILES)}")
    return PROFILES[key]
