"""Which approval rule decides a call, and how rules are checked and described. Pure.

A rule covers a call when its tool is the call's (or `*`), it applies where the call is made (its
scope: a project, a user, everyone) and its `match` holds:
- `command_prefix`: the call is a simple shell command whose words start with the prefix's words
  (a command with `;`, `&&`, `|`, redirections, substitutions or globs is never matched by a
  prefix: `git status && rm -rf ~` is more than `git status`);
- `sql_kind` / `sql_table`: one SQL statement of that kind, on that table;
- `argument` + `pattern`: the argument's whole value, `*` in the pattern standing for any text and
  `\\*` for a star (a star in the call's value is only ever a star);
- `writes`: a call the tool itself would ask for;
- nothing: every call of the tool.

An `allow` rule never covers a command that can run code beyond its program and subcommand
(`CallFacts.runs_code`: ``git -c core.fsmonitor=… status``, `find -exec`) unless it names that
exact command: a rule on `git` is not one on every program git can be made to run. `deny` and `ask`
rules cover it as any other (a deny on `git` denies `git -c x status`).

When several rules cover a call, `deny` beats `ask`, which beats `allow` (a rule can make a call
safer, never less safe than another rule says); among the rules of that decision the most specific
is the one that decides and is named in the audit (a tool's own rule before a `*` rule, then the
narrower match: more prefix words, kind and table over one of them, more literal characters).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from contracts import (
    ANY_TOOL_RULE,
    ApprovalRule,
    NewRule,
    RuleContext,
    RuleDecision,
    RuleMatch,
    RuleScope,
    RuleVerdict,
)

SEVERITY = {RuleDecision.DENY: 2, RuleDecision.ASK: 1, RuleDecision.ALLOW: 0}


@dataclass(frozen=True)
class CallFacts:
    """What rules read of a call (the tool tells them; see `Tool.rule_facts`)."""

    tool_id: str
    arguments: dict[str, Any] = field(default_factory=dict)
    words: tuple[str, ...] | None = None
    """A simple shell command's words (None: not one, or not a shell command)."""
    sql_kind: str | None = None
    sql_table: str | None = None
    writes: bool = False
    """The tool itself would ask for the call."""
    runs_code: str | None = None
    """Why the command can run code beyond its program and subcommand (``git -c core.fsmonitor=…
    status``; None: it cannot). Only a deny or ask rule, or an allow rule naming the exact call,
    covers it (`covers`), and no rule is offered for it (`propose`)."""


def applies(rule: NewRule, context: RuleContext) -> bool:
    """Whether the rule's scope takes in a session of this project and user."""
    if rule.scope == RuleScope.PROJECT:
        return rule.project is not None and rule.project == context.project
    if rule.scope == RuleScope.USER:
        return rule.user is not None and rule.user == context.user
    return True


def covers(rule: NewRule, facts: CallFacts) -> bool:
    """Whether the rule's tool and match take in the call (see the module docstring)."""
    if rule.tool not in (facts.tool_id, ANY_TOOL_RULE):
        return False
    match = rule.match
    if facts.runs_code is not None and rule.decision == RuleDecision.ALLOW and not exact(match):
        return False
    if match.command_prefix is not None:
        prefix = _words(match.command_prefix)
        if facts.words is None or not prefix or tuple(facts.words[: len(prefix)]) != prefix:
            return False
    if match.sql_kind is not None and (facts.sql_kind or "").upper() != match.sql_kind.upper():
        return False
    if match.sql_table is not None and (facts.sql_table or "").lower() != match.sql_table.lower():
        return False
    if match.argument is not None:
        value = facts.arguments.get(match.argument)
        if value is None or not pattern_matches(match.pattern or "*", _text(value)):
            return False
    return not (match.writes and not facts.writes)


def verdict(rules: Iterable[ApprovalRule], facts: CallFacts, context: RuleContext) -> RuleVerdict | None:
    """The rule that decides the call, if any covers it: the strictest decision, then the most
    specific rule of it, with its text as it is now (scope, project, user, match), for the audit."""
    found = [rule for rule in rules if applies(rule, context) and covers(rule, facts)]
    if not found:
        return None
    rule = max(found, key=lambda r: (SEVERITY[r.decision], specificity(r)))
    return RuleVerdict(
        rule_id=rule.rule_id,
        decision=rule.decision,
        description=describe(rule),
        reason=rule.reason,
        created_by=rule.created_by or "",
        scope=rule.scope,
        project=rule.project,
        user=rule.user,
        match=rule.match,
    )


def specificity(rule: NewRule) -> tuple[int, int, int]:
    """How narrow a rule is: its own tool before `*`, then how much its match pins down."""
    match = rule.match
    pinned = 0
    if match.command_prefix is not None:
        pinned += 10 * len(_words(match.command_prefix))
    pinned += 10 * (match.sql_kind is not None) + 10 * (match.sql_table is not None)
    literal = len((match.pattern or "").replace("\\*", "x").replace("*", "")) if match.argument else 0
    return (rule.tool != ANY_TOOL_RULE, pinned + (match.argument is not None), literal)


def exact(match: RuleMatch) -> bool:
    """Whether the match names one value of one argument (no `*` in its pattern), nothing broader."""
    return (
        match.argument is not None
        and match.pattern is not None
        and "*" not in match.pattern.replace("\\*", "")
    )


def pattern_matches(pattern: str, value: str) -> bool:
    """Whether `value` is what `pattern` describes, whole: `*` any text, `\\*` a star, all else itself."""
    parts = re.split(r"(\\\*|\*)", pattern)
    regex = "".join(".*" if part == "*" else re.escape("*" if part == "\\*" else part) for part in parts)
    return re.fullmatch(regex, value, flags=re.DOTALL) is not None


def escape(text: str) -> str:
    """`text` as a pattern that matches only itself (its stars escaped)."""
    return text.replace("*", "\\*")


def problems(rule: NewRule) -> list[str]:
    """What is wrong with a rule, each naming the field (empty: it can be saved)."""
    found = []
    match = rule.match
    kinds = [
        name
        for name, given in (
            ("command_prefix", match.command_prefix is not None),
            ("sql_kind/sql_table", match.sql_kind is not None or match.sql_table is not None),
            ("argument", match.argument is not None),
        )
        if given
    ]
    if len(kinds) > 1:
        found.append(
            f"match: give one of command_prefix, sql_kind/sql_table or argument, not {' and '.join(kinds)}"
        )
    if match.command_prefix is not None and not _words(match.command_prefix):
        found.append(
            f"match.command_prefix: {match.command_prefix!r} has no words (unbalanced quotes or empty)"
        )
    if match.pattern is not None and match.argument is None:
        found.append("match.pattern: goes with match.argument (the argument it matches)")
    if match.argument is not None and not match.argument.strip():
        found.append("match.argument: empty; name the argument the pattern matches")
    if not rule.tool.strip():
        found.append("tool: empty; name a tool (`sql`, `terminal`, ...) or `*`")
    if rule.scope == RuleScope.PROJECT and not rule.project:
        found.append("project: scope `project` needs the project it applies to")
    if rule.scope == RuleScope.USER and not rule.user:
        found.append("user: scope `user` needs the person it applies to")
    if rule.scope != RuleScope.PROJECT and rule.project:
        found.append(f"project: only for scope `project` (this rule's scope is `{rule.scope}`)")
    if rule.scope != RuleScope.USER and rule.user:
        found.append(f"user: only for scope `user` (this rule's scope is `{rule.scope}`)")
    return found


def describe(rule: NewRule) -> str:
    """The rule in a few words: `allow terminal "git status" in project /repo`."""
    match = rule.match
    parts = [str(rule.decision), rule.tool]
    if match.command_prefix is not None:
        parts.append(f'"{match.command_prefix}"')
    if match.sql_kind or match.sql_table:
        parts.append(" ".join(p for p in ((match.sql_kind or "").upper(), match.sql_table or "") if p))
    if match.argument is not None:
        parts.append(f"{match.argument}={match.pattern or '*'}")
    if match.writes:
        parts.append("(writes)")
    if not (match.command_prefix or match.sql_kind or match.sql_table or match.argument or match.writes):
        parts.append("(every call)")
    where = {RuleScope.PROJECT: f" in project {rule.project}", RuleScope.USER: f" for {rule.user}"}
    return " ".join(parts) + where.get(rule.scope, "")


def propose(facts: CallFacts) -> RuleMatch:
    """The match a person is offered for "allow always" of this call: the program and its
    subcommand (`git push`, not the whole line), or the statement's kind and table.

    Raises:
        ValueError: The call is a command that can run other code (`CallFacts.runs_code`), which
            asks every time: no rule is offered for it.
    """
    if facts.runs_code is not None:
        command = shlex.join(facts.words or ())
        raise ValueError(
            f"`{command}` can run other code ({facts.runs_code}): it asks every time, and no "
            "allow-always rule is offered for it; approve it once"
        )
    if facts.words:
        head = list(facts.words[:1])
        if len(facts.words) > 1 and re.fullmatch(r"[a-z][a-z0-9-]*", facts.words[1]):
            head.append(facts.words[1])  # a subcommand: `git push`, `npm install`
        return RuleMatch(command_prefix=shlex.join(head))
    if facts.sql_kind:
        return RuleMatch(sql_kind=facts.sql_kind, sql_table=facts.sql_table)
    return RuleMatch()


def _words(command: str) -> tuple[str, ...]:
    try:
        return tuple(shlex.split(command))
    except ValueError:
        return ()


def _text(value: Any) -> str:
    return value if isinstance(value, str) else str(value)
