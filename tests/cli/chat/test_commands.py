"""Reading a typed line into slash commands: several per line, quotes, arguments, closest names."""

from __future__ import annotations

import pytest

from cli.chat.commands import BY_NAME, closest, is_command, parse, words
from cli.chat.dispatch import HANDLERS
from cli.chat.info_commands import first_sentence


def names(line: str) -> list[tuple[str, list[str], str | None]]:
    return [(i.name, i.args, i.error) for i in parse(line)]


def test_one_command_with_its_arguments() -> None:
    assert names("/approve tool_1") == [("approve", ["tool_1"], None)]
    assert names("/chat save nightly") == [("chat save", ["nightly"], None)]
    assert names("  /status  ") == [("status", [], None)]


def test_several_commands_share_a_line() -> None:
    assert names("/pause /status /chat list") == [
        ("pause", [], None),
        ("status", [], None),
        ("chat list", [], None),
    ]


def test_a_path_or_a_quoted_word_never_starts_a_command() -> None:
    assert names("/graph run /tmp/plan.json /graph status") == [
        ("graph run", ["/tmp/plan.json"], None),
        ("graph status", [], None),
    ]
    assert names('/deny tool_2 "/status is not a reason" /pending') == [
        ("deny", ["tool_2", "/status is not a reason"], None),
        ("pending", [], None),
    ]
    assert names("/graph run /tmp") == [("graph run", ["/tmp"], None)]


def test_a_reason_takes_the_rest_of_the_command() -> None:
    assert names("/deny tool_1 it's too late today") == [("deny", ["tool_1", "it's too late today"], None)]
    assert names("/cancel done for now /status") == [("cancel", ["done for now"], None), ("status", [], None)]


def test_quotes_group_words_and_a_lone_quote_is_a_character() -> None:
    assert [w.text for w in words("a \"b c\" 'd e' it's")] == ["a", "b c", "d e", "it's"]
    assert [w.quoted for w in words('x "y"')] == [False, True]


@pytest.mark.parametrize(
    ("line", "error"),
    [
        ("/staus", "unknown command /staus: did you mean /status"),
        ("/sesions", "unknown command /sesions: did you mean /sessions?"),
        ("/aprove tool_1", "unknown command /aprove: did you mean /approve?"),
        ("/zzzz", "unknown command /zzzz: type /help for the list"),
        ("/chat sav x", "unknown /chat command 'sav': did you mean /chat save?"),
        ("/chat", "/chat needs a command: say one of: delete, list, resume, save, share"),
        ("/approve", "usage: /approve ID"),
        ("/attach a b", "usage: /attach KEY"),
    ],
)
def test_what_cannot_run_says_why(line: str, error: str) -> None:
    (invocation,) = parse(line)
    assert invocation.error is not None and invocation.error.startswith(error), invocation.error


def test_an_unknown_command_then_a_known_one() -> None:
    assert [(n, e is None) for n, _, e in names("/staus /pending")] == [("staus", False), ("pending", True)]


def test_closest_prefers_the_names_it_starts() -> None:
    assert closest("se") == ["sessions", "settings"]
    assert closest("gra") == ["grants", "graph"]
    assert closest("staus") == ["status"]


def test_aliases_and_messages() -> None:
    assert names("/exit") == [("quit", [], None)]
    assert is_command("/status") and not is_command("//status is a path") and not is_command("hello /status")


def test_every_command_has_a_handler() -> None:
    assert set(HANDLERS) == set(BY_NAME)


def test_a_tool_is_described_by_its_first_sentence() -> None:
    assert (
        first_sentence("Ask a question (e.g. a choice) and wait. Then more.")
        == "Ask a question (e.g. a choice) and wait"
    )
    assert first_sentence("Run it, i.e. now.") == "Run it, i.e. now"
    assert first_sentence("No full stop") == "No full stop"
