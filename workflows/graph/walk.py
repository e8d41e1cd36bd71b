"""Walking a graph's links: every task reached from some tasks, following edges (and GOTOs).

Pure: the one traversal that reachability at the door (`reach`) and resets (`rules.resets`) share.
"""

from __future__ import annotations

from collections.abc import Iterable


def reached(links: Iterable[tuple[str, str]], starts: Iterable[str], *, with_starts: bool = True) -> set[str]:
    """Every task reached from `starts` by following `links` (source → target); the starts
    themselves too when `with_starts` (else only if a link leads back to them)."""
    children: dict[str, list[str]] = {}
    for source, target in links:
        children.setdefault(source, []).append(target)
    starts = list(starts)
    stack = starts if with_starts else [child for start in starts for child in children.get(start, [])]
    found: set[str] = set()
    while stack:
        node = stack.pop()
        if node not in found:
            found.add(node)
            stack.extend(children.get(node, []))
    return found


def upstream(links: Iterable[tuple[str, str]], start: str) -> set[str]:
    """`start` and every task that leads to it by `links`."""
    return reached(((target, source) for source, target in links), [start])
