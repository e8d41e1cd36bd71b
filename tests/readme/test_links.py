"""Every relative link of the README, docs/*.md, bench/README.md and CHANGELOG.md leads somewhere:
the file exists, and a `#fragment` names a heading of it (as GitHub makes heading anchors)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted(
    [ROOT / "README.md", ROOT / "CHANGELOG.md", ROOT / "bench" / "README.md", *(ROOT / "docs").glob("*.md")]
)
_FENCED = re.compile(r"^\s*```.*?^\s*```", re.DOTALL | re.MULTILINE)
_CODE = re.compile(r"`[^`\n]*`")
_LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
_HEADING = re.compile(r"^#{1,6} (.+?)\s*$", re.MULTILINE)


def anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens."""
    text = heading.replace("`", "").strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    """The anchors of `page`'s headings (a repeated one also as `name-1`, `name-2`, ...)."""
    seen: dict[str, int] = {}
    found = set()
    for heading in _HEADING.findall(_FENCED.sub("", page.read_text())):
        name = anchor(heading)
        found.add(f"{name}-{seen[name]}" if name in seen else name)
        seen[name] = seen.get(name, 0) + 1
    return found


def links(page: Path) -> list[str]:
    """The relative links of `page`, outside code."""
    text = _CODE.sub("", _FENCED.sub("", page.read_text()))
    return [target for target in _LINK.findall(text) if not re.match(r"^[a-z]+:", target)]


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(ROOT)))
def test_every_relative_link_leads_somewhere(page: Path) -> None:
    broken = []
    for target in links(page):
        path, _, fragment = target.partition("#")
        linked = (page.parent / path).resolve() if path else page
        if not linked.exists():
            broken.append(f"{target}: no such file")
        elif fragment and linked.suffix == ".md" and fragment not in anchors(linked):
            broken.append(f"{target}: no heading #{fragment} in {linked.relative_to(ROOT)}")
    assert not broken, f"{page.relative_to(ROOT)}: " + "; ".join(broken)


def test_anchors_are_made_as_github_makes_them() -> None:
    assert anchor("Interactive: synapse chat") == "interactive-synapse-chat"
    assert anchor("Attachments and shell commands: `@` and `!`") == "attachments-and-shell-commands--and-"
    assert anchor("A 5-minute walkthrough") == "a-5-minute-walkthrough"
    assert anchor("Output as it comes, in seed 004's chunks") == "output-as-it-comes-in-seed-004s-chunks"
