"""Reading the README's shell blocks: sections, CI markers and what each block says it prints."""

from __future__ import annotations

import pytest

from .blocks import first_missing, pieces, shell_blocks

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
