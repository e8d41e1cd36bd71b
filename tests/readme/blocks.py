"""The shell blocks of the README and of docs/*.md, as a reader pastes them: where they are, what
they say they print, and which ones CI cannot run.

Conventions (written for the reader first; the README says the first one in its walkthrough):

- `# → TEXT` (on its own line or after a command) is what the block prints. It is checked against
  the block's output with whitespace ignored (`"status": "waiting"` matches the API's compact
  `"status":"waiting"`), and `…` stands for output left out, so `"status": "waiting" … "tool_1"`
  is two pieces that must appear in that order. The expectations of a block are found in order.
- `<!-- not run in CI: REASON -->` right before a block: CI skips it, saying REASON (a block
  that needs a Lark app, a cloud account, or `make up` itself).
- `<!-- CI needs PROGRAM: REASON -->` right before a block: CI runs it where PROGRAM works, and
  skips it elsewhere, saying REASON.
- `<!-- CI writes this to FILE: REASON -->` right before a block of any language: CI adds the
  block to FILE in the reader's folder before it starts the stack (the declarations a reader
  pastes into `synapse.toml` and then restarts `make up` for).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

SHELLS = frozenset({"bash", "sh", "shell"})
"""Fence languages of blocks a reader pastes into a terminal."""
ELLIPSIS = "…"
_EXPECT = re.compile(r"(?:^|\s)# → (.+?)\s*$")
_FENCE = re.compile(r"^(\s*)```\s*([\w-]*)\s*$")
_HEADING = re.compile(r"^(#{1,3}) (.+?)\s*$")
_COMMENT = re.compile(r"^\s*<!--(.*?)-->\s*$")
_NOT_RUN = re.compile(r"^\s*not run in CI:\s*(.+?)\s*$")
_NEEDS = re.compile(r"^\s*CI needs (\S+):\s*(.+?)\s*$")
_WRITES = re.compile(r"^\s*CI writes this to (\S+):\s*(.+?)\s*$")


@dataclass(frozen=True)
class Block:
    """One fenced block of a document (the README, a page of docs/)."""

    section: str
    """The heading it is under (`##` or `###`)."""
    line: int
    """Line of its opening fence (1-based)."""
    code: str
    not_run: str | None = None
    """Why CI never runs it (`<!-- not run in CI: ... -->`)."""
    needs: tuple[str, str] | None = None
    """(program, why) from `<!-- CI needs PROGRAM: WHY -->`."""
    file: str = "README.md"
    """The document, as the checkout names it (`docs/graphs.md`)."""
    language: str = "bash"
    """Its fence's language (`bash`, `toml`, `` for none)."""
    writes: str | None = None
    """The file CI adds it to before the stack starts (`<!-- CI writes this to FILE: WHY -->`)."""

    @property
    def name(self) -> str:
        """How failures and skips name it."""
        return f"{self.file}:{self.line} ({self.section})"

    @property
    def expected(self) -> list[list[str]]:
        """Its `# →` lines, each split into the pieces `…` separates."""
        return [pieces(match.group(1)) for match in map(_EXPECT.search, self.code.splitlines()) if match]


def pieces(expectation: str) -> list[str]:
    """The parts of one expectation that must appear in order (`…` is output left out)."""
    return [part.strip() for part in expectation.split(ELLIPSIS) if part.strip()]


def shell_blocks(markdown: str, file: str = "README.md") -> list[Block]:
    """Every shell block of `markdown` (the document `file`), in order, with its section and CI markers."""
    return [block for block in fenced_blocks(markdown, file) if block.language in SHELLS]


def fenced_blocks(markdown: str, file: str = "README.md") -> list[Block]:
    """Every fenced block of `markdown` (the document `file`), in order, with its section and CI markers."""
    blocks: list[Block] = []
    lines = markdown.splitlines()
    section = ""
    index = 0
    while index < len(lines):
        line = lines[index]
        if heading := _HEADING.match(line):
            if len(heading.group(1)) > 1:
                section = heading.group(2)
            index += 1
            continue
        fence = _FENCE.match(line)
        if not fence:
            index += 1
            continue
        indent, language = fence.groups()
        end = next(
            (i for i in range(index + 1, len(lines)) if lines[i].strip() == "```"),
            None,
        )
        if end is None:
            raise ValueError(f"{file}:{index + 1}: a ``` block that never closes")
        body = [text[len(indent) :] if text.startswith(indent) else text for text in lines[index + 1 : end]]
        not_run, needs, writes = _markers(lines, index, file)
        code = "\n".join(body) + "\n"
        blocks.append(Block(section, index + 1, code, not_run, needs, file, language, writes))
        index = end + 1
    return blocks


def _markers(
    lines: Sequence[str], fence: int, file: str
) -> tuple[str | None, tuple[str, str] | None, str | None]:
    """The CI markers in the HTML comments right above the fence at `fence` of `file`."""
    not_run: str | None = None
    needs: tuple[str, str] | None = None
    writes: str | None = None
    above = fence - 1
    while above >= 0 and (comment := _COMMENT.match(lines[above])):
        text = comment.group(1)
        if skip := _NOT_RUN.match(text):
            not_run = skip.group(1)
        elif need := _NEEDS.match(text):
            needs = (need.group(1), need.group(2))
        elif written := _WRITES.match(text):
            writes = written.group(1)
            if writes.startswith("/") or ".." in writes.split("/"):
                raise ValueError(f"{file}:{above + 1}: CI writes only inside the reader's folder: {writes!r}")
        elif "CI" in text:
            raise ValueError(f"{file}:{above + 1}: a CI marker the docs test does not know: {text!r}")
        above -= 1
    return not_run, needs, writes


def _squash(text: str) -> str:
    return "".join(text.split())


def first_missing(expected: Iterable[Sequence[str]], output: str) -> str | None:
    """The first expectation (as written) not found in `output`, all searched in order with
    whitespace ignored; None when every one is there."""
    haystack = _squash(output)
    position = 0
    for expectation in expected:
        for piece in expectation:
            found = haystack.find(_squash(piece), position)
            if found < 0:
                return f" {ELLIPSIS} ".join(expectation) + f"   (missing: {piece!r})"
            position = found + len(_squash(piece))
    return None
