""" "Allow always": the rule offered for a call, and the rule a person's edit of it makes.

The REPL's `a` and the console's "Allow always" button (through `POST /rule-offers`) offer the same.

The offer is `core.rules.match.propose` of the call's facts, worked out here as the tools do:
a simple shell command's words (`git push`, never a line with `;`, `|`, ...), a SQL statement's
kind and table. A command that can run other code (``git -c core.fsmonitor=… status``) is offered
no rule: it asks every time. A call neither covers (a command with shell syntax, another tool) is offered its
exact arguments, never "every call". The person edits the one line shown: the command prefix, the
statement's `KIND [TABLE]`, or the argument's pattern.

Where it applies is the narrowest place that exists (`narrowest`): the session's project, else the
person the session is for, else this session only, which is no rule but an approval with a grant
(`session_grant`). It is said in words before anything is saved (`wording`). A global rule is made
only when an admin picks "every session" (`EVERY_SESSION`), never by default.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from contracts import NewRule, RuleDecision, RuleMatch, RuleScope
from core.rules.match import CallFacts, escape, problems, propose


@dataclass(frozen=True)
class Offer:
    """What "allow always" offers: the match, and the one line a person may edit."""

    tool: str
    match: RuleMatch
    label: str
    """What the editable line is (`command prefix`, `SQL kind and table`, `command` pattern)."""
    line: str


def facts(tool: str, arguments: dict[str, Any]) -> CallFacts:
    """What the rules read of a call of the `terminal` or `sql` tool (others: their arguments)."""
    if tool == "terminal":
        from activities.tools.terminal.code import runs_code
        from activities.tools.terminal.command import command_of, words_of
        from activities.tools.terminal.free import SHELL_SYNTAX

        command = command_of(arguments)
        words = words_of(command) if command and not SHELL_SYNTAX.search(command) else None
        return CallFacts(
            tool,
            arguments,
            words=tuple(words) if words else None,
            runs_code=runs_code(words) if words else None,
        )
    if tool == "sql" and isinstance(arguments.get("sql"), str):
        from activities.tools.sql.syntax import classify

        found = classify(arguments["sql"])
        if found.kind not in ("UNKNOWN", "MULTIPLE"):
            return CallFacts(tool, arguments, sql_kind=found.kind, sql_table=found.table)
    return CallFacts(tool, arguments)


def offer(tool: str, arguments: dict[str, Any]) -> Offer:
    """The rule offered for this call.

    Raises:
        ValueError: The call has no argument to narrow the rule to (none, or all null), or it is a
            command that can run other code (`propose`).
    """
    match = propose(facts(tool, arguments))
    if match.command_prefix is not None:
        return Offer(tool, match, "command prefix", match.command_prefix)
    if match.sql_kind is not None:
        return Offer(
            tool, match, "SQL kind and table", " ".join(filter(None, (match.sql_kind, match.sql_table)))
        )
    given = [name for name, value in arguments.items() if value is not None and name.strip()]
    if not given:
        raise ValueError(
            "the call has no argument a rule could match: allowing it always would allow every call "
            f"of {tool}; save such a rule by hand (POST /rules) if that is meant"
        )
    name = next((name for name in ("command", "sql") if name in given), given[0])
    value = arguments[name]
    pattern = escape(value if isinstance(value, str) else str(value))
    return Offer(
        tool, RuleMatch(argument=name, pattern=pattern), f"`{name}` pattern (* is any text)", pattern
    )


def edited(offer: Offer, line: str) -> RuleMatch:
    """The match after the person's edit of `offer.line`.

    Raises:
        ValueError: The line is empty, or not a `KIND [TABLE]`.
    """
    text = line.strip()
    if not text:
        raise ValueError(f"the {offer.label} is empty")
    if offer.match.command_prefix is not None:
        return RuleMatch(command_prefix=text)
    if offer.match.sql_kind is not None:
        parts = text.split()
        if len(parts) > 2:
            raise ValueError(f"{text!r}: give a statement kind and at most one table, e.g. `DELETE orders`")
        return RuleMatch(sql_kind=parts[0].upper(), sql_table=parts[1] if len(parts) == 2 else None)
    return RuleMatch(argument=offer.match.argument, pattern=text)


@dataclass(frozen=True)
class Where:
    """Where "allow always" applies: a rule's scope and its project or person, or (`scope` None)
    this session only, which is a grant, not a rule."""

    scope: RuleScope | None
    project: str | None = None
    user: str | None = None

    @property
    def words(self) -> str:
        """`in project /shop`, `in alice's sessions`, `in every session`, `in this session only`."""
        if self.scope == RuleScope.PROJECT:
            return f"in project {self.project}"
        if self.scope == RuleScope.USER:
            return f"in {self.user}'s sessions"
        if self.scope == RuleScope.GLOBAL:
            return "in every session"
        return "in this session only"


SESSION_ONLY = Where(None)
"""This session only: the call is approved with a grant; no rule is saved."""
EVERY_SESSION = Where(RuleScope.GLOBAL)
"""Every session: a global rule, only when an admin explicitly picks it."""


def narrowest(project: str | None, user: str | None) -> Where:
    """Where "allow always" applies unless an admin picks every session: the session's `project`,
    else the person it is for (`user`), else this session only."""
    if project:
        return Where(RuleScope.PROJECT, project=project)
    if user:
        return Where(RuleScope.USER, user=user)
    return SESSION_ONLY


def wording(offer: Offer, where: Where) -> str:
    """What "allow always" will do, in words, before it is done: `Allow sql calls with this SQL
    kind and table in project /shop, without asking.`"""
    return f"Allow {offer.tool} calls with this {offer.label} {where.words}, without asking."


def session_grant(offered: Sequence[str]) -> str:
    """The grant that allows "this session only": `session_prefix` when the request offers it
    (its `content.grants`), else `session`."""
    return "session_prefix" if "session_prefix" in offered else "session"


def rule(tool: str, match: RuleMatch, who: str, said_in: str, where: Where) -> NewRule:
    """The rule to save: allow these calls `where` (a project, a person, or every session when an
    admin picked it); `who` made it, `said_in` the place they said so (`synapse chat`, `the console`).

    Raises:
        ValueError: `where` is this session only (a grant, not a rule), or the rule would not be
            valid (what is wrong, by field).
    """
    if where.scope is None:
        raise ValueError(
            "this session only is no rule: approve the call with a grant (`session_grant`) instead"
        )
    made = NewRule(
        tool=tool,
        match=match,
        decision=RuleDecision.ALLOW,
        scope=where.scope,
        project=where.project if where.scope == RuleScope.PROJECT else None,
        user=where.user if where.scope == RuleScope.USER else None,
        reason=f"allowed always by {who} in {said_in}",
        created_by=who,
    )
    wrong = problems(made)
    if wrong:
        raise ValueError("; ".join(wrong))
    return made
