"""Reading the README's shell blocks: sections, CI markers and what each block says it prints."""

from __future__ import annotations

import pytest

from .blocks import fenced_blocks, first_missing, pieces, shell_blocks

MARKDOWN = """# Title

## First

```bash
curl -s http://127.0.0.1:8000/x   # → "status": "waiting" … "tool_1"
```

Some text, then a block in another language, which is not a shell block:

```toml
a = 1   # → not an expectation
```

### Second

<!-- not run in CI: needs a Lark app -->
```bash
make up
```

<!-- CI needs bwrap: commands run in its sandbox -->
```sh
echo hi
# → hi
```
"""


def test_blocks_know_their_section_line_markers_and_expectations() -> None:
    first, second, third = shell_blocks(MARKDOWN)
    assert (first.section, first.line, first.not_run, first.needs) == ("First", 5, None, None)
    assert first.expected == [['"status": "waiting"', '"tool_1"']]
    assert first.code == 'curl -s http://127.0.0.1:8000/x   # → "status": "waiting" … "tool_1"\n'
    assert (second.section, second.not_run, second.expected) == ("Second", "needs a Lark app", [])
    assert third.needs == ("bwrap", "commands run in its sandbox") and third.expected == [["hi"]]
    assert third.name == "README.md:23 (Second)"


def test_an_unknown_ci_marker_or_an_open_block_is_an_error() -> None:
    with pytest.raises(ValueError, match="does not know"):
        shell_blocks("<!-- CI skips this -->\n```bash\ntrue\n```\n")
    with pytest.raises(ValueError, match="never closes"):
        shell_blocks("```bash\ntrue\n")


@pytest.mark.parametrize(
    ("output", "missing"),
    [
        ('{"status":"waiting","answer":null,"pending":{"interaction_id":"tool_1"}}', None),
        ('{"status": "waiting"}\n{"pending": {"interaction_id": "tool_1"}}', None),
        ('{"status":"completed"}', '"status": "waiting"'),
        ('{"pending":{"interaction_id":"tool_1"},"status":"waiting"}', '"pending":'),
    ],
)
def test_expectations_ignore_whitespace_and_are_found_in_order(output: str, missing: str | None) -> None:
    expected = [pieces('"status": "waiting"'), pieces('"pending": … "interaction_id": "tool_1"')]
    found = first_missing(expected, output)
    assert (found is None) if missing is None else (found is not None and repr(missing) in found), found


def test_a_block_ci_writes_names_its_file_and_its_document() -> None:
    markdown = (
        "## Declare\n\n<!-- CI writes this to synapse.toml: the stack declares it -->\n```toml\n[a]\n```\n"
    )
    [block] = fenced_blocks(markdown, "docs/x.md")
    assert (block.language, block.writes, block.code) == ("toml", "synapse.toml", "[a]\n")
    assert block.name == "docs/x.md:4 (Declare)"
    assert shell_blocks(markdown, "docs/x.md") == [], "a toml block is not a shell block"
    with pytest.raises(ValueError, match="inside the reader's folder"):
        fenced_blocks("<!-- CI writes this to ../x.toml: no -->\n```toml\n```\n")
    with pytest.raises(ValueError, match=r"docs/x\.md:1: a CI marker the docs test does not know"):
        fenced_blocks("<!-- CI skips this -->\n```toml\n```\n", "docs/x.md")
