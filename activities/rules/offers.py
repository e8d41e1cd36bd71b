""" "Allow always": the rule offered for a call, and the rule a person's edit of it makes.

The REPL's `a` and the console's "Allow always" button (through `POST /rule-offers`) offer the same.

The offer is `core.rules.match.propose` of the call's facts, worked out here as the tools do:
a simple shell command's words (`git push`, never a line with `;`, `|`, ...), a SQL statement's
kind and table. A call neither covers (a command with shell syntax, another tool) is offered its
exact arguments, never "every call". The person edits the one line shown: the command prefix, the
statement's `KIND [TABLE]`, or the argument's pattern.
"""

from __future__ import annotations

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
        from activities.tools.terminal.command import command_of, words_of
        from activities.tools.terminal.free import SHELL_SYNTAX

        command = command_of(arguments)
        words = words_of(command) if command and not SHELL_SYNTAX.search(command) else None
        return CallFacts(tool, arguments, words=tuple(words) if words else None)
    if tool == "sql" and isinstance(arguments.get("sql"), str):
        from activities.tools.sql.syntax import classify

        found = classify(arguments["sql"])
        if found.kind not in ("UNKNOWN", "MULTIPLE"):
            return CallFacts(tool, arguments, sql_kind=found.kind, sql_table=found.table)
    return CallFacts(tool, arguments)


def offer(tool: str, arguments: dict[str, Any]) -> Offer:
    """The rule offered for this call.

    Raises:
        ValueError: The call has no argument to narrow the rule to (none, or all null).
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


def rule(
    tool: str, match: RuleMatch, who: str, where: str, *, project: str | None = None, user: str | None = None
) -> NewRule:
    """The rule to save: allow these calls in `project`, else for `user`, else everywhere; `where`
    the person said so (`synapse chat`, `the console`).

    Raises:
        ValueError: The rule would not be valid (what is wrong, by field).
    """
    scope = RuleScope.PROJECT if project else RuleScope.USER if user else RuleScope.GLOBAL
    made = NewRule(
        tool=tool,
        match=match,
        decision=RuleDecision.ALLOW,
        scope=scope,
        project=project,
        user=user if scope == RuleScope.USER else None,
        reason=f"allowed always by {who} in {where}",
        created_by=who,
    )
    wrong = problems(made)
    if wrong:
        raise ValueError("; ".join(wrong))
    return made
