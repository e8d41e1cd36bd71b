"""Which approval rule decides a call: a table of the rules (precedence, specificity, the literal
star, scope, what a prefix never matches) and a property against a plain reference."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from activities.tools.terminal.code import runs_code
from contracts import ApprovalRule, NewRule, RuleContext, RuleDecision, RuleMatch, RuleScope, RuleVerdict
from core.rules.match import CallFacts, covers, describe, escape, pattern_matches, problems, propose, verdict

AT = datetime(2026, 11, 25, tzinfo=UTC)
HERE = RuleContext(project="/repo", user="alice")


def rule(
    n: int,
    decision: str,
    tool: str = "terminal",
    *,
    scope: str = "global",
    project: str | None = None,
    user: str | None = None,
    **match: Any,
) -> ApprovalRule:
    return ApprovalRule(
        rule_id=f"rule_{n}",
        tool=tool,
        match=RuleMatch(**match),
        decision=RuleDecision(decision),
        scope=RuleScope(scope),
        project=project,
        user=user,
        created_by="admin",
        created_at=AT,
    )


def shell(command: str, *, writes: bool = True) -> CallFacts:
    """A terminal call's facts as the tool gives them (words only for a simple command)."""
    simple = not any(c in command for c in ";&|<>`$(){}*?[]!#\\\n")
    return CallFacts(
        "terminal", {"command": command}, tuple(command.split()) if simple else None, writes=writes
    )


def code(command: str) -> CallFacts:
    """A simple command that can run other code, with its facts as the terminal gives them."""
    facts = shell(command)
    return replace(facts, runs_code=runs_code(facts.words or ()))


FSMONITOR = "git -c core.fsmonitor=x status"


def sql(kind: str, table: str | None, *, writes: bool = True) -> CallFacts:
    return CallFacts("sql", {"sql": f"{kind} ..."}, sql_kind=kind, sql_table=table, writes=writes)


DECIDES = [
    # (why, rules, call, the deciding rule or None)
    ("nothing covers it", [rule(1, "allow", command_prefix="git status")], shell("ls -la"), None),
    (
        "a prefix covers longer commands",
        [rule(1, "allow", command_prefix="git")],
        shell("git push origin"),
        1,
    ),
    ("a prefix is whole words", [rule(1, "allow", command_prefix="git pu")], shell("git push"), None),
    (
        "deny beats allow",
        [rule(1, "allow", command_prefix="git"), rule(2, "deny", command_prefix="git")],
        shell("git push"),
        2,
    ),
    (
        "deny beats a narrower allow",
        [rule(1, "deny", command_prefix="git"), rule(2, "allow", command_prefix="git push origin")],
        shell("git push origin main"),
        1,
    ),
    (
        "ask beats allow",
        [rule(1, "allow", command_prefix="git push"), rule(2, "ask", command_prefix="git")],
        shell("git push"),
        2,
    ),
    (
        "deny beats ask",
        [rule(1, "ask", tool="*"), rule(2, "deny", command_prefix="rm")],
        shell("rm -rf build"),
        2,
    ),
    (
        "the narrower of two allows decides",
        [rule(1, "allow", command_prefix="git"), rule(2, "allow", command_prefix="git push")],
        shell("git push x"),
        2,
    ),
    ("a tool's own rule before a `*` rule", [rule(1, "ask", tool="*"), rule(2, "ask")], shell("ls"), 2),
    (
        "kind and table before kind alone",
        [
            rule(1, "allow", "sql", sql_kind="DELETE"),
            rule(2, "allow", "sql", sql_kind="DELETE", sql_table="orders"),
        ],
        sql("DELETE", "orders"),
        2,
    ),
    (
        "another table is not covered",
        [rule(1, "allow", "sql", sql_kind="DELETE", sql_table="orders")],
        sql("DELETE", "users"),
        None,
    ),
    (
        "kinds and tables ignore case",
        [rule(1, "deny", "sql", sql_kind="drop", sql_table="ORDERS")],
        sql("DROP", "orders"),
        1,
    ),
    (
        "a table alone covers every kind",
        [rule(1, "ask", "sql", sql_table="orders")],
        sql("SELECT", "orders", writes=False),
        1,
    ),
    (
        "a prefix never covers a compound command",
        [rule(1, "allow", command_prefix="git status")],
        shell("git status && rm -rf ~"),
        None,
    ),
    ("nor a glob", [rule(1, "allow", command_prefix="rm build")], shell("rm build *"), None),
    (
        "`writes` covers what the tool asks for",
        [rule(1, "deny", tool="*", writes=True)],
        sql("DELETE", "orders"),
        1,
    ),
    (
        "`writes` not what it runs freely",
        [rule(1, "deny", tool="*", writes=True)],
        sql("SELECT", "orders", writes=False),
        None,
    ),
    ("another tool's rule", [rule(1, "deny", "sql")], shell("ls"), None),
    (
        "a project rule here",
        [rule(1, "allow", scope="project", project="/repo", command_prefix="make")],
        shell("make test"),
        1,
    ),
    (
        "a project rule elsewhere",
        [rule(1, "allow", scope="project", project="/other", command_prefix="make")],
        shell("make test"),
        None,
    ),
    (
        "a user rule for alice",
        [rule(1, "deny", scope="user", user="alice", command_prefix="make")],
        shell("make"),
        1,
    ),
    (
        "a user rule for bob",
        [rule(1, "deny", scope="user", user="bob", command_prefix="make")],
        shell("make"),
        None,
    ),
    (
        "a global deny over a project allow",
        [
            rule(1, "allow", scope="project", project="/repo", command_prefix="make"),
            rule(2, "deny", command_prefix="make"),
        ],
        shell("make"),
        2,
    ),
    (
        "an argument pattern",
        [rule(1, "allow", "fetch", argument="url", pattern="https://docs.example/*")],
        CallFacts("fetch", {"url": "https://docs.example/a/b"}),
        1,
    ),
    (
        "the pattern is the whole value",
        [rule(1, "allow", "fetch", argument="url", pattern="https://docs.example/")],
        CallFacts("fetch", {"url": "https://docs.example/a"}),
        None,
    ),
    (
        "a star in the call is only a star",
        [rule(1, "allow", "fetch", argument="q", pattern="a\\*")],
        CallFacts("fetch", {"q": "ab"}),
        None,
    ),
    (
        "an escaped star matches a star",
        [rule(1, "allow", "fetch", argument="q", pattern="a\\*")],
        CallFacts("fetch", {"q": "a*"}),
        1,
    ),
    (
        "a missing argument is not covered",
        [rule(1, "allow", "fetch", argument="q", pattern="*")],
        CallFacts("fetch", {}),
        None,
    ),
    (
        "an allow on the program never covers what can run other code",
        [rule(1, "allow", command_prefix="git")],
        code(FSMONITOR),
        None,
    ),
    (
        "nor on program and action",
        [rule(1, "allow", command_prefix="find .")],
        code("find . -fprintf pipe text"),
        None,
    ),
    (
        "nor a pattern with a star",
        [rule(1, "allow", argument="command", pattern="git *")],
        code(FSMONITOR),
        None,
    ),
    ("nor every call", [rule(1, "allow"), rule(2, "allow", "*", writes=True)], code(FSMONITOR), None),
    (
        "an allow naming the command exactly covers it",
        [rule(1, "allow", argument="command", pattern=FSMONITOR)],
        code(FSMONITOR),
        1,
    ),
    (
        "a deny on the program denies it",
        [rule(1, "allow", command_prefix="git"), rule(2, "deny", command_prefix="git")],
        code(FSMONITOR),
        2,
    ),
    ("a deny alone too", [rule(1, "deny", command_prefix="git")], code(FSMONITOR), 1),
    ("an ask on the program asks", [rule(1, "ask", command_prefix="git")], code(FSMONITOR), 1),
]


@pytest.mark.parametrize(("why", "rules", "call", "decides"), DECIDES, ids=[row[0] for row in DECIDES])
def test_the_rule_that_decides(
    why: str, rules: list[ApprovalRule], call: CallFacts, decides: int | None
) -> None:
    found = verdict(rules, call, HERE)
    assert (found.rule_id if found else None) == (f"rule_{decides}" if decides else None), why
    if found is not None:
        assert found.decision == next(r.decision for r in rules if r.rule_id == found.rule_id)


def test_a_pattern_treats_only_its_own_unescaped_stars_as_any_text() -> None:
    assert pattern_matches("rm *", "rm -rf /")
    assert not pattern_matches("rm \\*", "rm -rf /")
    assert pattern_matches(escape("ls *.py"), "ls *.py") and not pattern_matches(escape("ls *.py"), "ls a.py")
    assert pattern_matches("a.b", "a.b") and not pattern_matches("a.b", "axb"), (
        "regex characters are themselves"
    )


@pytest.mark.parametrize(
    ("new", "said"),
    [
        (
            NewRule(
                tool="sql",
                decision="allow",
                scope="global",
                match=RuleMatch(command_prefix="x", sql_kind="DELETE"),
            ),
            "match: give one of",
        ),
        (
            NewRule(tool="t", decision="allow", scope="global", match=RuleMatch(pattern="*")),
            "match.pattern: goes with match.argument",
        ),
        (
            NewRule(tool="t", decision="allow", scope="global", match=RuleMatch(command_prefix="'open")),
            "has no words",
        ),
        (NewRule(tool="t", decision="allow", scope="project"), "project: scope `project` needs the project"),
        (NewRule(tool="t", decision="allow", scope="user"), "user: scope `user` needs the person"),
        (
            NewRule(tool="t", decision="allow", scope="global", project="/repo"),
            "project: only for scope `project`",
        ),
        (NewRule(tool=" ", decision="deny", scope="global"), "tool: empty"),
    ],
)
def test_a_rule_that_cannot_work_says_what_is_wrong(new: NewRule, said: str) -> None:
    assert any(said in problem for problem in problems(new)), problems(new)


def test_a_good_rule_has_no_problems_and_reads_as_a_sentence() -> None:
    good = NewRule(
        tool="terminal",
        decision="allow",
        match=RuleMatch(command_prefix="git status"),
        scope="project",
        project="/repo",
    )
    assert problems(good) == []
    assert describe(good) == 'allow terminal "git status" in project /repo'
    assert (
        describe(
            NewRule(
                tool="sql",
                decision="deny",
                scope="global",
                match=RuleMatch(sql_kind="delete", sql_table="orders"),
            )
        )
        == "deny sql DELETE orders"
    )
    assert describe(NewRule(tool="*", decision="ask", scope="global")) == "ask * (every call)"


def test_allow_always_proposes_the_program_and_subcommand_or_the_statement_kind_and_table() -> None:
    assert propose(shell("git push origin main")) == RuleMatch(command_prefix="git push")
    assert propose(shell("ls -la /tmp")) == RuleMatch(command_prefix="ls")
    assert propose(sql("DELETE", "orders")) == RuleMatch(sql_kind="DELETE", sql_table="orders")
    assert propose(shell("echo a && rm b")) == RuleMatch(), "a compound command gets no prefix to widen"


def test_allow_always_offers_no_rule_for_a_command_that_can_run_other_code() -> None:
    with pytest.raises(ValueError) as refused:
        propose(code(FSMONITOR))
    assert str(refused.value) == (
        "`git -c core.fsmonitor=x status` can run other code (git -c sets configuration that can run "
        "programs (core.fsmonitor, core.pager, alias.*)): it asks every time, and no allow-always rule "
        "is offered for it; approve it once"
    )


# ---------------------------------------------------------------- the property

WORDS = st.sampled_from(["git", "push", "status", "rm", "-rf", "make", "ls"])
DECISIONS = st.sampled_from(list(RuleDecision))


@st.composite
def rules_and_call(draw: st.DrawFn) -> tuple[list[ApprovalRule], CallFacts]:
    found = []
    for n in range(1, draw(st.integers(0, 8)) + 1):
        prefix = draw(st.lists(WORDS, min_size=0, max_size=3))
        tool = draw(st.sampled_from(["terminal", "*", "sql"]))
        found.append(
            rule(
                n,
                draw(DECISIONS),
                tool,
                command_prefix=" ".join(prefix) or None,
                writes=draw(st.sampled_from([None, True])),
            )
        )
    words = draw(st.lists(WORDS, min_size=1, max_size=4))
    return found, CallFacts("terminal", {}, tuple(words), writes=draw(st.booleans()))


def reference(rules: list[ApprovalRule], call: CallFacts) -> RuleDecision | None:
    """Plain: a rule covers the call when its tool fits, its prefix words start the command and its
    `writes` holds; the strictest decision of those wins."""
    order = [RuleDecision.DENY, RuleDecision.ASK, RuleDecision.ALLOW]
    covering = [
        r.decision
        for r in rules
        if r.tool in ("terminal", "*")
        and (
            r.match.command_prefix is None
            or list(call.words or ())[: len(r.match.command_prefix.split())] == r.match.command_prefix.split()
        )
        and (not r.match.writes or call.writes)
    ]
    return next((d for d in order if d in covering), None)


@settings(max_examples=300, deadline=None)
@given(rules_and_call())
def test_the_strictest_covering_rule_decides_and_is_the_most_specific_of_its_kind(
    drawn: tuple[list[ApprovalRule], CallFacts],
) -> None:
    rules, call = drawn
    found = verdict(rules, call, HERE)
    assert (found.decision if found else None) == reference(rules, call)
    if found is not None:
        chosen = next(r for r in rules if r.rule_id == found.rule_id)
        assert covers(chosen, call)

        def narrowness(r: ApprovalRule) -> tuple[bool, int]:
            return r.tool != "*", len((r.match.command_prefix or "").split())

        same = [r for r in rules if covers(r, call) and r.decision == chosen.decision]
        assert narrowness(chosen) == max(map(narrowness, same)), (
            "the narrowest rule of that decision is named"
        )


def test_the_verdict_carries_the_rules_text_as_it_was_when_it_decided() -> None:
    """The audit keeps what the rule said (its scope, project, user and match), not only its id."""
    deciding = rule(7, "deny", scope="project", project="/repo", command_prefix="git push", writes=True)
    other = rule(8, "allow", scope="user", user="alice", command_prefix="git")
    found = verdict([other, deciding], shell("git push origin main", writes=True), HERE)
    assert found is not None
    assert (found.rule_id, found.scope, found.project, found.user, found.match) == (
        "rule_7",
        RuleScope.PROJECT,
        "/repo",
        None,
        RuleMatch(command_prefix="git push", writes=True),
    )
    mine = verdict([other], shell("git status"), HERE)
    assert mine is not None and (mine.scope, mine.project, mine.user, mine.match) == (
        RuleScope.USER,
        None,
        "alice",
        RuleMatch(command_prefix="git"),
    )


def test_a_verdict_recorded_before_the_rules_text_was_kept_still_reads() -> None:
    old = {
        "rule_id": "rule_3",
        "decision": "deny",
        "description": "deny sql DROP",
        "reason": "",
        "created_by": "ada",
    }
    read = RuleVerdict.model_validate(old)
    assert (read.scope, read.project, read.user, read.match) == (RuleScope.GLOBAL, None, None, None)
