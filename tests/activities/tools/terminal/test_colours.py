"""A command's colours reach a screen that can show them: `styled` beside the plain text, the
plain text unchanged, every other escape sequence still removed."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from activities.tools.terminal.ansi import keep_colours, strip_ansi
from activities.tools.terminal.chunks import content_chunk, process

RED, RESET = "\x1b[31m", "\x1b[0m"


@pytest.mark.parametrize(
    ("raw", "plain", "coloured"),
    [
        (f"{RED}red{RESET} plain\n", "red plain\n", f"{RED}red{RESET} plain\n"),
        ("\x1b[1;32mbold green\x1b[m\n", "bold green\n", "\x1b[1;32mbold green\x1b[m\n"),
        ("\x1b[2K\x1b[1Gmoved\n", "moved\n", "moved\n"),
        ("\x1b]0;a title\x07titled\n", "titled\n", "titled\n"),
        (f"50%\r{RED}100%{RESET}\n", "100%\n", f"{RED}100%{RESET}\n"),
        (f"{RED}50%\r100%{RESET}\n", "100%\n", f"{RED}100%{RESET}\n"),
        (f"a\r{RED}\n", "a\n", f"a{RED}\n"),
    ],
)
def test_colours_are_kept_and_nothing_else(raw: str, plain: str, coloured: str) -> None:
    assert strip_ansi(raw) == plain
    assert keep_colours(raw) == coloured


PIECES = ["a", "b", " ", "\n", "\r", "\r\n", "\x07", RED, RESET, "\x1b[1;32m", "\x1b[m", "\x1b[2K", "\x1b[1G"]
PIECES += ["\x1b]0;a title\x07", "\x1b]8;;http://x\x1b\\", "\x1b(B", "\x1b=", "\t"]
"""What programs print: text, colours, cursor moves, titles and links, charset switches."""


@given(st.lists(st.sampled_from(PIECES)).map("".join))
def test_the_coloured_text_reads_as_the_plain_text(raw: str) -> None:
    assert strip_ansi(keep_colours(raw)) == strip_ansi(raw)


def test_a_chunk_says_styled_only_when_it_has_colours() -> None:
    (coloured,) = process(f"{RED}error{RESET}: disk full\n", "generic")
    (plain,) = process("all good\n", "generic")

    assert coloured.content == "error: disk full\n"
    assert coloured.metadata["styled"] == f"{RED}error{RESET}: disk full\n"
    assert "styled" not in plain.metadata


def test_merged_chunks_keep_the_colours_of_each_part() -> None:
    merged = content_chunk("plain\n", 6, "generic")
    merged.extend("red\n", 13, f"{RED}red{RESET}\n")
    merged.extend("plain again\n", 12)

    assert merged.content == "plain\nred\nplain again\n"
    assert merged.metadata["styled"] == f"plain\n{RED}red{RESET}\nplain again\n"
    assert merged.metadata["content_length"] == len(merged.content)
