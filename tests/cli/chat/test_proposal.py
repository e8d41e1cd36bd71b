""" "Allow always" (`a`): the rule offered for a call (the tool and its command head, or its SQL
kind and table), and the rule a person's edit of that one line makes."""

from __future__ import annotations

import pytest

from cli.chat.proposal import edited, offer, rule
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


def test_a_bad_edit_is_refused() -> None:
    statement = offer("sql", {"sql": "DELETE FROM orders"})
    with pytest.raises(ValueError, match="is empty"):
        edited(statement, "  ")
    with pytest.raises(ValueError, match="at most one table"):
        edited(statement, "DELETE FROM orders")


def test_the_rule_allows_in_the_project_and_says_who() -> None:
    made = rule("sql", RuleMatch(sql_kind="DELETE", sql_table="orders"), "/work/shop", "alice")
    assert (made.decision, made.scope, made.project, made.created_by) == (
        "allow",
        "project",
        "/work/shop",
        "alice",
    )
