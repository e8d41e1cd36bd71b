"""Approval rules: lasting decisions about kinds of tool calls, kept outside any one session.

A rule names a tool (or `*`), what calls of it it covers (`RuleMatch`), what happens to them
(allow without asking, ask a person, deny), and where it applies (a project, a user, everyone).
Every channel's calls are assessed against them; the audit names the rule that decided.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import Field, StrictBool

from .base import Contract
from .principals import PersonId

ANY_TOOL_RULE = "*"
"""A rule's `tool` for every tool."""


class RuleDecision(StrEnum):
    """What a rule does to the calls it covers. When several rules cover a call, `deny` beats
    `ask`, which beats `allow`."""

    ALLOW = "allow"
    """Run without asking (never for a tool marked critical: its two people are still asked)."""
    ASK = "ask"
    """Ask a person, even for a call the tool would run freely."""
    DENY = "deny"
    """Never run; the agent is told which rule refused it."""


class RuleScope(StrEnum):
    """Where a rule applies."""

    PROJECT = "project"
    """Sessions of one project (`project`: what the session names, e.g. the folder a REPL runs in)."""
    USER = "user"
    """Sessions of one person (`user`: the principal a session is for)."""
    GLOBAL = "global"
    """Every session."""


class RuleMatch(Contract):
    """Which calls of the tool a rule covers: one of a command prefix, a SQL kind and table, an
    argument pattern, or every call the tool would ask for (`writes`); nothing set: every call."""

    command_prefix: str | None = Field(
        default=None,
        description="Shell commands whose words start with these words (`git push`): only simple "
        "commands (no `;`, `&&`, `|`, redirections or substitutions) match a prefix.",
    )
    sql_kind: str | None = Field(
        default=None, description="SQL statements of this kind (`DELETE`, `INSERT`, `CREATE`, ...)."
    )
    sql_table: str | None = Field(
        default=None, description="SQL statements on this table (with `sql_kind` or alone)."
    )
    argument: str | None = Field(default=None, description="An argument's name, matched with `pattern`.")
    pattern: str | None = Field(
        default=None,
        description="The argument's whole value: `*` stands for any text, `\\*` for a star itself; a "
        "star in a call's argument is only ever a star.",
    )
    writes: StrictBool | None = Field(
        default=None,
        description="True: every call the tool itself would ask for (it may change something: a SQL "
        "write, a shell command not known to be read-only).",
    )


class NewRule(Contract):
    """Body of `POST /rules`."""

    tool: str = Field(description="The tool (`sql`, `terminal`, an MCP tool) or `*` for every tool.")
    match: RuleMatch = Field(default_factory=RuleMatch, description="Which of its calls.")
    decision: RuleDecision = Field(description="allow, ask or deny.")
    scope: RuleScope = Field(
        description="Where it applies: `project`, `user` or `global`; always given (a rule that forgot "
        "it would bind every session)."
    )
    project: str | None = Field(default=None, description="Scope `project`: the project it applies to.")
    user: PersonId | None = Field(default=None, description="Scope `user`: the person it applies to.")
    reason: str = Field(default="", max_length=2000, description="Why; shown when the rule decides.")
    created_by: PersonId | None = Field(
        default=None,
        description="Who made it: the API key's principal when keys are on (this field is then "
        "ignored); with keys off the name given here, else `anonymous`.",
    )


class RuleOfferRequest(Contract):
    """Body of `POST /rule-offers`: a call a person wants to allow always, and their edit, if any."""

    tool: str = Field(min_length=1, description="The call's tool (`sql`, `terminal`, an MCP tool).")
    arguments: dict[str, Any] = Field(default_factory=dict, description="The call's arguments.")
    line: str | None = Field(
        default=None,
        max_length=2000,
        description="The person's edit of the offered `line`; absent: the offer as it is.",
    )


class RuleOffer(Contract):
    """The "allow always" rule offered for a call: what it would match, and the one line a person may edit."""

    tool: str = Field(description="The tool.")
    match: RuleMatch = Field(description="Which of its calls the rule would cover.")
    label: str = Field(
        description="What `line` is: `command prefix`, `SQL kind and table`, an argument's pattern."
    )
    line: str = Field(description="The editable line (e.g. `git push`, `DELETE orders`).")


class ApprovalRule(NewRule):
    """A rule as stored."""

    rule_id: str = Field(
        description="Its id, never reused: `rule_` and 26 characters of time and randomness "
        "(`rule_01JDQ8Z5V7C3M2K9T4XWB6N1RA`); rules saved before such ids keep theirs (`rule_12`); "
        "profiles' rules are `profile:<name>:<n>`."
    )
    created_at: datetime = Field(description="When it was made (UTC).")
    deleted_by: PersonId | None = Field(
        default=None, description="Who deleted it (None: it is live); a deleted rule decides nothing."
    )
    deleted_at: datetime | None = Field(default=None, description="When it was deleted (UTC).")


class RuleContext(Contract):
    """What a call's rules depend on besides the call: where the session runs and for whom."""

    project: str | None = Field(default=None, description="The session's project, if it names one.")
    user: PersonId | None = Field(default=None, description="The person the session is for, if known.")
    profile: str | None = Field(default=None, description="The session's profile (its rules apply too).")


class RuleVerdict(Contract):
    """The rule that decides a call (the assessment carries it), with its text as it was when it
    decided: the audit keeps that, whatever later happens to the rule. Fields added later have
    defaults, so assessments recorded before them still validate."""

    rule_id: str = Field(description="The deciding rule.")
    decision: RuleDecision = Field(description="What it decides.")
    description: str = Field(description='The rule in a few words, e.g. `allow terminal "git status"`.')
    reason: str = Field(default="", description="Why the rule was made.")
    created_by: PersonId = Field(default="", description="Who made it.")
    scope: RuleScope = Field(default=RuleScope.GLOBAL, description="Where the rule applies.")
    project: str | None = Field(default=None, description="Scope `project`: its project.")
    user: PersonId | None = Field(default=None, description="Scope `user`: its person.")
    match: RuleMatch | None = Field(
        default=None, description="Which calls it covers (None: recorded before the field existed)."
    )
