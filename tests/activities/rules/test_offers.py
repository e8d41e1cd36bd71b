""" "Allow always" (the REPL's `a`, the console's button): the rule offered for a call (the tool and its command head, or its SQL
kind and table), the rule a person's edit of that one line makes, and where it applies, said in
words: the session's project, else its person, else this session only (a grant); every session
only when an admin picks it."""

from __future__ import annotations

import pytest

from activities.rules.offers import (
    EVERY_SESSION,
    SESSION_ONLY,
    Where,
    edited,
    narrowest,
    offer,
    rule,
    session_grant,
    wording,
)
from contracts import RuleMatch, RuleScope


def test_a_command_is_offered_its_words_and_a_statement_its_kind_and_table() -> None:
    command = offer("terminal", {"command": "git push origin main"})
    assert (command.label, command.line) == ("command prefix", "git push")  # the command's head
    assert edited(command, "  git push origin ") == RuleMatch(command_prefix="git push origin")
    statement = offer("sql", {"sql": "DELETE FROM orders WHERE id = 1"})
    assert (statement.label, statement.line) == ("SQL kind and table", "DELETE orders")
    assert edited(statement, "delete") == RuleMatch(sql_kind="DELETE")
    assert edited(statement, "update orders") == RuleMatch(sql_kind="UPDATE", sql_table="orders")


def test_shell_syntax_or_another_tool_is_offered_its_exact_arguments() -> None:
    piped = offer("terminal", {"command": "cat x | sh"})
    assert piped.match.argument == "command" and piped.label.startswith("`command` pattern")
    assert piped.line != "" and "*" not in piped.line.replace("\\*", "")
    other = offer("mcp__notes__write", {"title": "a"})
    assert (other.match.argument, other.line) == ("title", "a")


def test_a_call_without_an_argument_to_match_is_offered_no_rule() -> None:
    """Its rule would allow every call of the tool: never offered."""
    for arguments in ({}, {"command": None}):
        with pytest.raises(ValueError, match="would allow every call of terminal"):
            offer("terminal", arguments)
    assert offer("terminal", {"command": None, "cwd": "/tmp"}).match == RuleMatch(
        argument="cwd", pattern="/tmp"
    )


def test_a_command_that_can_run_other_code_is_offered_no_rule() -> None:
    """`git -c …` asks every time: "allow always" has nothing to offer, and says why."""
    with pytest.raises(ValueError, match=r"can run other code \(git -c sets configuration") as refused:
        offer("terminal", {"command": "git -c core.fsmonitor=x status"})
    assert "it asks every time, and no allow-always rule is offered for it" in str(refused.value)
    with pytest.raises(ValueError, match=r"find -fprintf writes into the file it names"):
        offer("terminal", {"command": "find . -fprintf pipe text"})
    assert offer("terminal", {"command": "git status --short"}).line == "git status"


def test_a_bad_edit_is_refused() -> None:
    statement = offer("sql", {"sql": "DELETE FROM orders"})
    with pytest.raises(ValueError, match="is empty"):
        edited(statement, "  ")
    with pytest.raises(ValueError, match="at most one table"):
        edited(statement, "DELETE FROM orders")


@pytest.mark.parametrize(
    ("project", "user", "where", "said"),
    [
        (
            "shop",
            "alice",
            Where(RuleScope.PROJECT, project="shop"),
            "Allow sql calls with this SQL kind and table in project shop, without asking.",
        ),
        (
            None,
            "alice",
            Where(RuleScope.USER, user="alice"),
            "Allow sql calls with this SQL kind and table in alice's sessions, without asking.",
        ),
        (
            "",
            "",
            SESSION_ONLY,
            "Allow sql calls with this SQL kind and table in this session only, without asking.",
        ),
    ],
)
def test_allow_always_applies_in_the_narrowest_place_there_is_and_says_where(
    project: str | None, user: str | None, where: Where, said: str
) -> None:
    """The session's project, else the person it is for, else this session only; never everywhere."""
    found = narrowest(project, user)
    assert found == where
    assert wording(offer("sql", {"sql": "DELETE FROM orders WHERE id = 1"}), found) == said


def test_this_session_only_is_a_grant_not_a_rule() -> None:
    match = RuleMatch(sql_kind="DELETE", sql_table="orders")
    with pytest.raises(ValueError, match="this session only is no rule"):
        rule("sql", match, "alice", "the console", SESSION_ONLY)
    assert session_grant(["session", "session_prefix"]) == "session_prefix"
    assert session_grant(["session"]) == session_grant([]) == "session"


def test_the_rule_allows_where_it_was_offered_and_says_who() -> None:
    match = RuleMatch(sql_kind="DELETE", sql_table="orders")
    made = rule("sql", match, "alice", "synapse chat", narrowest("/work/shop", "bob"))
    assert (made.decision, made.scope, made.project, made.user, made.created_by) == (
        "allow",
        "project",
        "/work/shop",
        None,
        "alice",
    )
    assert made.reason == "allowed always by alice in synapse chat"
    for_bob = rule("sql", match, "alice", "the console", narrowest(None, "bob"))
    assert (for_bob.scope, for_bob.project, for_bob.user, for_bob.reason) == (
        "user",
        None,
        "bob",
        "allowed always by alice in the console",
    )
    everywhere = rule("sql", match, "ada", "the console", EVERY_SESSION)  # only when an admin picks it
    assert (everywhere.scope, everywhere.project, everywhere.user) == ("global", None, None)
    assert wording(offer("terminal", {"command": "git push"}), EVERY_SESSION) == (
        "Allow terminal calls with this command prefix in every session, without asking."
    )
