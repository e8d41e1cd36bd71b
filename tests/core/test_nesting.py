"""Measuring and cutting JSON nesting: from bytes (the door) and from values (agents' and tools' results)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.nesting import TOKENS, cut_nesting, cut_note, nested_too_deep, too_deep


def nested(levels: int, leaf: Any = "leaf") -> Any:
    """`{"n": {"n": ... leaf}}`, `levels` objects deep (0: the leaf)."""
    value = leaf
    for _ in range(levels):
        value = {"n": value}
    return value


@pytest.mark.parametrize(
    ("value", "limit", "path"),
    [
        ("flat", 1, None),
        ({}, 1, None),
        ({"a": {}}, 1, ("a",)),
        ({"a": 1, "b": [1, 2, {"c": [[]]}]}, 3, ("b", 2, "c")),
        ({"a": 1, "b": [1, 2, {"c": [[]]}]}, 4, ("b", 2, "c", 0)),
        ({"a": 1, "b": [1, 2, {"c": [[]]}]}, 5, None),
        ([[], [[]], [[[]]]], 3, (2, 0, 0)),
        ({'k"{[': {"x": '}]\\"{{{'}}, 2, None),  # brackets and escapes inside strings count for nothing
        ({"é ü": [{"日本": {}}]}, 3, ("é ü", 0, "日本")),
        (nested(64), 64, None),
        (nested(65), 64, ("n",) * 64),
    ],
)
def test_the_first_container_too_deep_is_named_from_bytes_and_from_values(
    value: Any, limit: int, path: tuple[Any, ...] | None
) -> None:
    assert too_deep(value, limit) == path
    for text in (json.dumps(value), json.dumps(value, ensure_ascii=False, indent=2)):
        assert nested_too_deep(text.encode(), limit) == path, text


def test_text_too_deep_for_any_parser_is_measured_without_parsing() -> None:
    text = b'{"n":' * 100_000 + b"1" + b"}" * 100_000
    assert nested_too_deep(text, 64) == ("n",) * 64
    assert nested_too_deep(b"[" * 100_000 + b"]" * 100_000, 8) == (0,) * 8


def test_a_value_too_deep_is_cut_with_a_note_and_one_within_the_limit_is_kept_as_it_is() -> None:
    kept = {"a": [1, {"b": "c"}]}
    assert cut_nesting(kept, 3) is kept
    cut = cut_nesting({"a": [1, {"b": {"c": 1}}], "z": nested(10)}, 3)
    assert cut == {"a": [1, {"b": cut_note(3)}], "z": {"n": {"n": cut_note(3)}}}
    assert too_deep(cut, 3) is None and "SYNAPSE_MAX_JSON_DEPTH" in cut_note(3)
    assert too_deep(cut_nesting(nested(5000), 64), 64) is None, "far deeper than Python recurses"


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(alphabet='ab"\\{}[],: é'),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=3), children, max_size=3)
    ),
    max_leaves=30,
)


@given(json_values, st.integers(min_value=1, max_value=8))
def test_bytes_and_values_agree_and_a_cut_value_fits(value: Any, limit: int) -> None:
    path = too_deep(value, limit)
    assert nested_too_deep(json.dumps(value).encode(), limit) == path
    assert too_deep(cut_nesting(value, limit), limit) is None
    if path is None:
        assert cut_nesting(value, limit) == value


@given(st.binary(max_size=300))
def test_a_string_matches_wherever_it_starts_so_the_scan_never_restarts_inside_one(tail: bytes) -> None:
    """The scan is linear in the body: a quote always starts a match (closed, or open to the end),
    so no body (escaped quotes, a backslash before a newline, a last lone backslash) makes the scanner
    try again from every quote inside a string, as a body of 16,000 escaped quotes once made it
    (seconds of the event loop, the worker's polls with it)."""
    found = TOKENS.match(b'"' + tail)
    assert found is not None and found.group()[:1] == b'"'
