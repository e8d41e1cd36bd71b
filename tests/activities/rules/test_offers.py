""" "Allow always" (the REPL's `a`, the console's button): the rule offered for a call (the tool and its command head, or its SQL
kind and table), and the rule a person's edit of that one line makes."""

from __future__ import annotations

import pytest

from activities.rules.offers import edited, offer, rule
from contracts import RuleMatch


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


def test_a_bad_edit_is_refused() -> None:
    statement = offer("sql", {"sql": "DELETE FROM orders"})
    with pytest.raises(ValueError, match="is empty"):
        edited(statement, "  ")
    with pytest.raises(ValueError, match="at most one table"):
        edited(statement, "DELETE FROM orders")


def test_the_rule_allows_in_the_project_else_for_the_user_else_everywhere_and_says_who() -> None:
    match = RuleMatch(sql_kind="DELETE", sql_table="orders")
    made = rule("sql", match, "alice", "synapse chat", project="/work/shop", user="bob")
    assert (made.decision, made.scope, made.project, made.user, made.created_by) == (
        "allow",
        "project",
        "/work/shop",
        None,
        "alice",
    )
    assert made.reason == "allowed always by alice in synapse chat"
    for_bob = rule("sql", match, "alice", "the console", user="bob")
    assert (for_bob.scope, for_bob.user, for_bob.reason) == (
        "user",
        "bob",
        "allowed always by alice in the console",
    )
    assert rule("sql", match, "alice", "the console").scope == "global"
