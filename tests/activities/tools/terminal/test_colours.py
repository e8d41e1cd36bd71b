"""A command's colours reach a screen that can show them: `styled` beside the plain text, the
plain text unchanged, every other escape sequence still removed, 7-bit or 8-bit (C1) alike."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from activities.tools.terminal.ansi import keep_colours, strip_ansi
from activities.tools.terminal.chunks import content_chunk, process, prompt_of

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
        # 8-bit (C1) sequences go whole, parameters and final byte included; their colours too
        ("\x9b31mred\x9b0m plain\n", "red plain\n", "red plain\n"),
        ("\x9b2J\x9b1;1Hcleared\n", "cleared\n", "cleared\n"),
        ("\x9b?25lhidden cursor\n", "hidden cursor\n", "hidden cursor\n"),
        ("\x9d0;a title\x9ctitled\n", "titled\n", "titled\n"),
        ("\x9d8;;http://x\x07link\x9d8;;\x1b\\\n", "link\n", "link\n"),
        ("\x1b]0;a title\x9ctitled\n", "titled\n", "titled\n"),
        # lone C1 characters go like lone C0 ones
        ("a\x85b\x9cc\x90d\x9fe\x80f\n", "abcdef\n", "abcdef\n"),
        (f"{RED}a\x9b{RESET}\n", "a\n", f"{RED}a{RESET}\n"),
        # what is left after a removal is never read again as a sequence
        ("\x1b\x85[2Jkept\n", "[2Jkept\n", "[2Jkept\n"),
        ("\x1b\x1b[0m[31m\n", "[31m\n", "\x1b[0m[31m\n"),
        ("\x1b[3\x9b1mx\n", "[3x\n", "[3x\n"),
    ],
)
def test_colours_are_kept_and_nothing_else(raw: str, plain: str, coloured: str) -> None:
    assert strip_ansi(raw) == plain
    assert keep_colours(raw) == coloured


PIECES = ["a", "b", " ", "\n", "\r", "\r\n", "\x07", RED, RESET, "\x1b[1;32m", "\x1b[m", "\x1b[2K", "\x1b[1G"]
PIECES += ["\x1b]0;a title\x07", "\x1b]8;;http://x\x1b\\", "\x1b(B", "\x1b=", "\t"]
PIECES += ["\x9b31m", "\x9b0m", "\x9b2J", "\x9d0;a title\x9c", "\x9d8;;http://x\x07", "\x1b", "[31m"]
"""What programs print: text, colours, cursor moves, titles and links, charset switches, 7-bit or
8-bit, and pieces of them."""
RAW = st.lists(st.sampled_from(PIECES) | st.characters(max_codepoint=0xA0)).map("".join)
"""Output as programs print it, and any control character anywhere in it."""
UNSEEN = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
"""What must never be left in cleaned output: control characters (ESC and C1 included) but a tab
and a newline."""


@given(RAW)
def test_the_coloured_text_reads_as_the_plain_text(raw: str) -> None:
    assert strip_ansi(keep_colours(raw)) == strip_ansi(raw)


@given(RAW)
def test_no_control_character_is_left_but_the_colours_kept(raw: str) -> None:
    assert not UNSEEN.search(strip_ansi(raw))
    assert not UNSEEN.search(re.sub(r"\x1b\[[0-9;]*m", "", keep_colours(raw)))


def test_8_bit_sequences_reach_neither_a_chunk_nor_a_prompt() -> None:
    """The stream's chunks (an agent CLI's typed lines, its marked prompt) are cleaned like the result."""
    raw = "\x9b1mThinking...\x9b0m\r\n\x9b32mUsing tool: fs_read\x9b0m\nread \x9d0;x\x9cit\x85\n"
    raw += "\x1b]697;StartPrompt\x07\x9b31m>\x9b0m \x1b]697;EndPrompt\x07"
    chunks = process(raw, "qcli")

    assert [(c.type, c.content) for c in chunks] == [
        ("thinking", "Thinking..."),
        ("tool_use", "Using tool: fs_read"),
        ("content", "read it\n"),
        ("pending", ">"),
    ]
    assert all("styled" not in c.metadata for c in chunks), "8-bit colours are not kept"
    assert prompt_of(raw) == ">"
    [generic] = process("\x9b31mred\x9b0m\n", "generic")
    assert (generic.content, "styled" in generic.metadata) == ("red\n", False)


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
