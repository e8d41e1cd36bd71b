"""The README and docs/*.md run as pasted: every shell block, in order, against a real `synapse up`.

The stack is the one a reader starts with `make up` (tests/cli/test_up.py's `Up`: the dev server,
a worker and the API as subprocesses, on free ports, with a data dir of its own), in a folder laid
out as the reader's checkout: `.synapse/` is that data dir, `.venv/` and `examples/` the
checkout's, and `synapse.toml` holds the blocks the documents mark `<!-- CI writes this to
synapse.toml: ... -->` (what a reader pastes there before starting `make up` again). The blocks
run in that folder, as the reader's second terminal does: the README's first, then
docs/walkthrough.md's (it goes on with the README's sessions and rows), then every other page of
docs/ in name order. Each block must exit 0 and print what its `# →` lines say
(tests/readme/blocks.py); blocks marked as not run in CI are skipped, each saying why.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from itertools import groupby
from pathlib import Path

import pytest

from activities.tools.terminal.sandbox import Sandbox
from tests.cli.test_up import Up, assert_ready, stop_with_sigterm

from .blocks import SHELLS, Block, fenced_blocks
from .runner import Ports, run_section

ROOT = Path(__file__).resolve().parents[2]
FIRST = ("README.md", "docs/walkthrough.md")
"""Run first, in this order: the walkthrough in depth goes on from the README's sessions and rows."""


def documents() -> list[str]:
    """The documents whose blocks run, in the order they run (named as the checkout names them)."""
    pages = sorted(path.relative_to(ROOT).as_posix() for path in (ROOT / "docs").glob("*.md"))
    return [*FIRST, *(page for page in pages if page not in FIRST)]


FENCED = [block for name in documents() for block in fenced_blocks((ROOT / name).read_text(), name)]
BLOCKS = [block for block in FENCED if block.language in SHELLS]
WRITTEN = [block for block in FENCED if block.writes]
SECTION_TIMEOUT = 90.0
"""Seconds one section may run: its own polls are bounded at 20 s each."""


def bwrap_problem() -> str:
    """Why the terminal sandbox cannot run here ("" when it can)."""
    _, why = Sandbox.find("bwrap", [Path.cwd()], Path.cwd())
    return why


REQUIREMENTS = {"bwrap": bwrap_problem}
"""What `<!-- CI needs PROGRAM: ... -->` can name, and how to tell whether it works here."""


def why_not_run(block: Block) -> str | None:
    """Why CI does not run `block` here, or None when it does."""
    if block.not_run:
        return f"{block.name} is not run in CI: {block.not_run}"
    if block.needs:
        program, why = block.needs
        problem = REQUIREMENTS[program]()
        if problem:
            return (
                f"{block.name} needs {program} ({why}), which cannot run here: {problem}; .ci/run installs it"
            )
    return None


NOT_RUN = {block.name: why for block in BLOCKS if (why := why_not_run(block))}
"""Why CI does not run a block here, by its name (document, line of its fence, section)."""
SKIPPED = [block for block in BLOCKS if block.name in NOT_RUN]
RUN = [block for block in BLOCKS if block.name not in NOT_RUN]


def test_the_documents_have_blocks_to_run_and_say_what_they_show() -> None:
    assert len(RUN) >= 20, [block.name for block in RUN]
    assert {"README.md", "docs/walkthrough.md", "docs/graphs.md", "docs/mcp.md"} <= {b.file for b in RUN}
    assert all(block.needs is None or block.needs[0] in REQUIREMENTS for block in BLOCKS)
    silent = [block.name for block in RUN if not block.expected]
    assert not silent, f"blocks that run but say nothing of what they print (add a `# →` line): {silent}"


def test_the_mcp_example_is_declared_as_the_docs_show_it() -> None:
    [declared] = [block for block in WRITTEN if block.file == "docs/mcp.md"]
    assert declared.writes == "synapse.toml" and declared.language == "toml"
    assert 'args = ["examples/mcp/notes_server.py"]' in declared.code
    assert (ROOT / "examples" / "mcp" / "notes_server.py").is_file()


@pytest.mark.parametrize("block", SKIPPED, ids=lambda block: block.name)
def test_a_block_ci_does_not_run(block: Block) -> None:
    pytest.skip(NOT_RUN[block.name])


@pytest.fixture
async def stack(tmp_path: Path) -> AsyncIterator[Up]:
    """`synapse up` on free ports, ready; its folder is the reader's checkout: `.synapse/` is its
    data dir, `.venv/` and `examples/` the checkout's (the documents run `.venv/bin/synapse` and
    declare `examples/mcp/notes_server.py`), and the blocks CI writes are in their files. It ends
    with SIGTERM, checked to stop every part (`stop_with_sigterm`)."""
    (tmp_path / ".synapse").symlink_to("state", target_is_directory=True)
    (tmp_path / ".venv").symlink_to(Path(sys.prefix), target_is_directory=True)
    (tmp_path / "examples").symlink_to(ROOT / "examples", target_is_directory=True)
    for block in WRITTEN:
        assert block.writes is not None
        with (tmp_path / block.writes).open("a") as written:
            written.write(block.code)
    up = Up(tmp_path)
    try:
        try:
            await assert_ready(up)
        except AssertionError as err:  # say where it stalled (the first wait says it already)
            said = "--- synapse up output ---" in str(err)
            raise AssertionError(err if said else f"{err}\n--- synapse up output ---\n{up.output}") from None
        yield up
        await stop_with_sigterm(up)  # tests/cli/test_up.py's SIGTERM check, on the reader's stack
    finally:
        up.kill_everything()


@pytest.mark.slow(seconds=90)
async def test_the_documents_run_as_pasted(stack: Up, tmp_path: Path) -> None:
    assert "A 5-minute walkthrough" in {block.section for block in RUN if block.file == "README.md"}
    assert "hint: README.md's 5-minute walkthrough goes on from here" in stack.output, "`up` points at it"
    ports = Ports(api=stack.api_port, ui=stack.ui_port)
    logs = tmp_path / "sections"
    logs.mkdir()
    found: list[str] = []
    for number, (_, blocks) in enumerate(groupby(RUN, key=lambda block: (block.file, block.section))):
        found += await run_section(
            list(blocks), ports, cwd=tmp_path, log=logs / f"{number}.log", within=SECTION_TIMEOUT
        )
    assert not found, "\n".join(found)


def test_a_block_whose_program_does_not_work_here_is_skipped_saying_why(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    block = Block("Shell commands", 7, "true\n", needs=("bwrap", "commands run in its sandbox"))
    monkeypatch.setitem(REQUIREMENTS, "bwrap", lambda: "'bwrap' was not found")
    assert why_not_run(block) == (
        "README.md:7 (Shell commands) needs bwrap (commands run in its sandbox), which cannot run here: "
        "'bwrap' was not found; .ci/run installs it"
    )
    monkeypatch.setitem(REQUIREMENTS, "bwrap", lambda: "")
    assert why_not_run(block) is None
