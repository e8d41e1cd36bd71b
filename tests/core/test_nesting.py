"""Measuring and cutting JSON nesting: from bytes (the door) and from values (agents' and tools' results)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.nesting import DEFAULT_LIMIT, TOKENS, Path, cut_nesting, cut_note, nested_too_deep, too_deep


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


def reference(value: Any, limit: int, path: Path = ()) -> Path | None:
    """The path of the first container (in document order) standing at level `limit + 1`, found the
    plain way: a container is one level deeper than the container holding it."""
    if not isinstance(value, dict | list):
        return None
    if len(path) == limit:
        return path
    items = value.items() if isinstance(value, dict) else enumerate(value)
    for key, child in items:
        if (found := reference(child, limit, (*path, key))) is not None:
            return found
    return None


FIELDS: list[Path] = [
    (),
    ("new_input_data",),
    ("response_data", "arguments"),
    ("blueprint", "new_tasks", 0, "input_data"),
]
"""Where the API's doors hold their free field (`tests/api/test_nesting.py`), and the body itself."""


@pytest.mark.parametrize("field", FIELDS, ids=lambda f: ".".join(map(str, f)) or "body")
@pytest.mark.parametrize("limit", [1, 2, 12, DEFAULT_LIMIT])
def test_every_depth_at_every_field_is_measured_as_the_reference_measures_it(field: Path, limit: int) -> None:
    """What the door decides, at every depth from the field's first level to past the limit and far
    past it: the API's tests send each door only the depths around the limit."""
    for depth in [*range(len(field) + 1, limit + 3), 220, 300]:
        body: Any = nested(depth - len(field))
        for key in reversed(field):
            body = [body] if isinstance(key, int) else {"other": 1, key: body}
        expected = None if depth <= limit else (*field, *["n"] * (limit - len(field)))[:limit]
        assert reference(body, limit) == expected, depth
        assert nested_too_deep(json.dumps(body).encode(), limit) == expected, depth
        assert too_deep(body, limit) == expected, depth


siblings_at_each_level: st.SearchStrategy[Any] = (
    st.none() | st.integers() | st.text(alphabet='a"\\{}[],:', max_size=4) | st.just({}) | st.just([[1]])
)


@st.composite
def deep_values(draw: st.DrawFn) -> tuple[Any, int]:
    """A value with one path down through 0..80 levels, each level an object or an array with
    siblings, and how many levels that path has."""
    value = draw(json_values)
    levels = draw(st.integers(min_value=0, max_value=80))
    for step in draw(st.lists(st.text(max_size=3) | st.integers(0, 2), min_size=levels, max_size=levels)):
        siblings = draw(st.lists(siblings_at_each_level, max_size=2))
        if isinstance(step, str):
            value = {**{f"{step}{n}": s for n, s in enumerate(siblings)}, step: value}
        else:
            value = [*siblings[:step], value, *siblings[step:]]
    return value, levels


@given(deep_values(), st.integers(min_value=-3, max_value=3))
def test_bytes_and_values_agree_with_the_reference_at_any_depth(deep: tuple[Any, int], near: int) -> None:
    """Any depth, the limit just above or below the value's deepest path (or far from it)."""
    value, levels = deep
    for limit in {max(levels + near, 0), DEFAULT_LIMIT}:
        expected = reference(value, limit)
        assert too_deep(value, limit) == expected
        assert nested_too_deep(json.dumps(value).encode(), limit) == expected
        assert nested_too_deep(json.dumps(value, indent=1).encode(), limit) == expected


@given(st.binary(max_size=300))
def test_a_string_matches_wherever_it_starts_so_the_scan_never_restarts_inside_one(tail: bytes) -> None:
    """The scan is linear in the body: a quote always starts a match (closed, or open to the end),
    so no body (escaped quotes, a backslash before a newline, a last lone backslash) makes the scanner
    try again from every quote inside a string, as a body of 16,000 escaped quotes once made it
    (seconds of the event loop, the worker's polls with it)."""
    found = TOKENS.match(b'"' + tail)
    assert found is not None and found.group()[:1] == b'"'
