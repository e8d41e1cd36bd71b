"""The README runs as pasted: every shell block, in order, against a real `synapse up`.

The stack is the one a reader starts with `make up` (tests/cli/test_up.py's `Up`: the dev server,
a worker and the API as subprocesses, on free ports, with a data dir of its own). The blocks run
in its folder, as the reader's second terminal does, where `.synapse/` is that data dir. Each
block must exit 0 and print what its `# →` lines say (tests/readme/blocks.py); blocks marked as
not run in CI are skipped, each saying why.
"""

from __future__ import annotations

import signal
import sys
from collections.abc import AsyncIterator
from itertools import groupby
from pathlib import Path

import pytest

from activities.tools.terminal.sandbox import Sandbox
from tests.cli.test_up import Up

from .blocks import Block, shell_blocks
from .runner import Ports, run_section

README = Path(__file__).resolve().parents[2] / "README.md"
BLOCKS = shell_blocks(README.read_text())
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


NOT_RUN = {block.line: why for block in BLOCKS if (why := why_not_run(block))}
"""Why CI does not run a block here, by the line of its fence."""
SKIPPED = [block for block in BLOCKS if block.line in NOT_RUN]
RUN = [block for block in BLOCKS if block.line not in NOT_RUN]


def test_the_readme_has_blocks_to_run_and_says_what_they_show() -> None:
    assert len(RUN) >= 15, [block.name for block in RUN]
    assert all(block.needs is None or block.needs[0] in REQUIREMENTS for block in BLOCKS)
    silent = [block.name for block in RUN if not block.expected]
    assert not silent, f"blocks that run but say nothing of what they print (add a `# →` line): {silent}"


@pytest.mark.parametrize("block", SKIPPED, ids=lambda block: block.name)
def test_a_block_ci_does_not_run(block: Block) -> None:
    pytest.skip(NOT_RUN[block.line])


@pytest.fixture
async def stack(tmp_path: Path) -> AsyncIterator[Up]:
    """`synapse up` on free ports, ready; its folder is the reader's checkout: `.synapse/` is its
    data dir, and `.venv/` the checkout's (the README runs `.venv/bin/synapse`)."""
    (tmp_path / ".synapse").symlink_to("state", target_is_directory=True)
    (tmp_path / ".venv").symlink_to(Path(sys.prefix), target_is_directory=True)
    up = Up(tmp_path)
    try:
        try:
            await up.wait_healthy()
        except AssertionError as err:  # say where it stalled (the first wait says it already)
            said = "--- synapse up output ---" in str(err)
            raise AssertionError(err if said else f"{err}\n--- synapse up output ---\n{up.output}") from None
        yield up
        up.process.send_signal(signal.SIGTERM)
        assert await up.wait_exit() == 0, up.output
    finally:
        up.kill_everything()


@pytest.mark.slow
async def test_the_readme_runs_as_pasted(stack: Up, tmp_path: Path) -> None:
    assert "A 5-minute walkthrough" in {block.section for block in RUN}
    assert "hint: README.md's 5-minute walkthrough goes on from here" in stack.output, "`up` points at it"
    ports = Ports(api=stack.api_port, ui=stack.ui_port)
    logs = tmp_path / "sections"
    logs.mkdir()
    found: list[str] = []
    for number, (_, blocks) in enumerate(groupby(RUN, key=lambda block: block.section)):
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
