"""Edge conditions (CEL) and data-flow paths: what a blueprint author writes, and what they get back."""

from __future__ import annotations

import operator
import re
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workflows.graph.cel import ConditionError, Conditions
from workflows.graph.paths import PathError, value_at

SOURCE = {"task_id": "score", "version": 1}


@pytest.mark.parametrize(
    ("expression", "output", "expected"),
    [
        ("output.score > 0.5", {"score": 0.7}, True),
        ("output.score > 0.5", {"score": 0.2}, False),
        ('source.task_id == "score" && size(output.items) == 2', {"items": [1, 2]}, True),
        ('output.kind in ["refund", "return"]', {"kind": "refund"}, True),
        ("output.items.exists(i, i.ok)", {"items": [{"ok": False}, {"ok": True}]}, True),
        ('output == "yes"', "yes", True),
    ],
)
def test_conditions_over_output_and_source(expression: str, output: object, expected: bool) -> None:
    assert Conditions().holds(expression, output, SOURCE) is expected


@pytest.mark.parametrize(
    ("expression", "output", "message"),
    [
        ("output.missing > 1", {"score": 1}, "condition 'output.missing > 1' failed: "),
        ("output.score", {"score": 0.7}, "gave double 0.7, not a boolean"),
        ("output.n > 1.0", {"n": None}, "`>` does not apply to null and double 1.0"),
    ],
)
def test_a_condition_that_cannot_be_evaluated_is_an_error_not_false(
    expression: str, output: object, message: str
) -> None:
    with pytest.raises(ConditionError, match=message.replace("(", r"\(").replace(".", r"\.")):
        Conditions().holds(expression, output, SOURCE)


OUT = {
    "n": 1,
    "score": 0.7,
    "count": 3,
    "big": 2**53 + 1,
    "done": 3,
    "total": 4,
    "s": "abc",
    "items": [1, 2, 3],
    "m": {"a": {"b": 2}},
    "ok": True,
    "x": None,
}
"""One output for the table below: ints, doubles, a string, a list, a map, a bool and a null."""


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        # an int from the output against a double literal, all six operators
        ("output.n < 1.5", True),
        ("output.n <= 1.0", True),
        ("output.n > 0.5", True),
        ("output.n >= 1.0", True),
        ("output.n == 1.0", True),
        ("output.n != 1.5", True),
        ("output.n > 1.5", False),
        ("output.n != 1.0", False),
        # a double from the output against an int literal, and literals alone
        ("output.score < 1", True),
        ("output.score >= 1", False),
        ("1 >= 0.5", True),
        ("1 == 1.0", True),
        ("1 != 1.5", True),
        ("-1 < 0.0", True),
        ("0.5 <= 1", True),
        ("1.0 > 1", False),
        ("1 == 1u", True),
        ("2u > 1.5", True),
        ("output.count == 3", True),
        ("output.count == 3.0", True),
        # integers beyond 2^53 compare exactly, never equal to a neighbouring double
        ("output.big == 9007199254740992.0", False),
        ("output.big != 9007199254740992.0", True),
        ("output.big > 9007199254740992.0", True),
        ("output.big == 9007199254740993", True),
        # arithmetic: int with double gives a double; two ints stay an int (CEL: truncated)
        ("2 * 0.5 == 1.0", True),
        ("1 + 0.5 == 1.5", True),
        ("output.n + 0.5 > 1", True),
        ("output.n - 0.5 == 0.5", True),
        ("output.count * 0.5 == 1.5", True),
        ("3 / 2 == 1", True),
        ("-3 / 2 == -1", True),
        ("3 / 2.0 == 1.5", True),
        ("output.done / output.total >= 0.5", False),
        ("double(output.done) / output.total >= 0.5", True),
        ("output.done / output.total == 0", True),
        ("1 / 0.0 > 1", True),
        ("-1 / 0.0 < 0", True),
        ("0.0 / 0.0 == 0.0 / 0.0", False),
        ("7 % 2 == 1", True),
        ("1 / 0 == 0", "divide by zero"),
        ("7 % 2.0 == 1", "`%` does not apply to int 7 and double 2.0"),
        ("9223372036854775807 + 1 > 0", "overflow"),
        ("output.n + 0.5", "gave double 1.5, not a boolean"),
        # strings
        ('output.s == "abc"', True),
        ('output.s != "abd"', True),
        ('output.s < "abd"', True),
        ('output.s.contains("b")', True),
        ('output.s.startsWith("ab")', True),
        ('output.s.endsWith("x")', False),
        ("size(output.s) == 3", True),
        ('output.s + "d" == "abcd"', True),
        ("output.s == 1", '`==` does not apply to string "abc" and int 1'),
        ("output.s < 1.5", '`<` does not apply to string "abc" and double 1.5'),
        # lists
        ("2 in output.items", True),
        ("2.0 in output.items", True),
        ("5 in output.items", False),
        ("size(output.items) == 3", True),
        ("output.items[0] == 1", True),
        ("output.items[2] >= 2.5", True),
        ("output.items == [1, 2, 3.0]", True),
        ("output.items == [1, 2]", False),
        ("output.items.exists(i, i > 2.5)", True),
        ("output.items.all(i, i >= 1.0)", True),
        ("output.items[5] == 1", "list index out of range"),
        # maps
        ("has(output.m.a)", True),
        ("has(output.m.z)", False),
        ('"a" in output.m', True),
        ("output.m.a.b == 2", True),
        ('output.m["a"]["b"] > 1.5', True),
        ('output.m == {"a": {"b": 2.0}}', True),
        ('output.m == {"a": {"b": 3}}', False),
        ("size(output.m) == 1", True),
        # missing fields name the field
        ("output.missing > 1", "condition 'output.missing > 1' failed: no such member in mapping: 'missing'"),
        ("output.m.a.c == 1.0", "no such member in mapping: 'c'"),
        # null: equal only to null; ordering or arithmetic with it is an error
        ("output.x == null", True),
        ("output.x != null", False),
        ("output.n == null", False),
        ("output.n != null", True),
        ("output.x > 1", "`>` does not apply to null and int 1"),
        ("output.x >= 0.5", "`>=` does not apply to null and double 0.5"),
        ("output.x + 1 == 2", "`+` does not apply to null and int 1"),
        # bools
        ("output.ok", True),
        ("output.ok == false", False),
        ("!output.ok || output.n > 1.5", False),
        ("output.ok && output.n >= 1.0", True),
        ("output.ok ? output.score > 0.5 : false", True),
        # source: task_id and version
        ('source.task_id == "score"', True),
        ("source.version == 1", True),
        ("source.version >= 1.0", True),
        ("source.version > 1", False),
    ],
)
def test_numbers_and_values_behave_as_a_json_author_expects(expression: str, expected: bool | str) -> None:
    conditions = Conditions()
    if isinstance(expected, bool):
        assert conditions.holds(expression, OUT, SOURCE) is expected
    else:
        with pytest.raises(ConditionError, match=re.escape(expected)):
            conditions.holds(expression, OUT, SOURCE)


@pytest.mark.parametrize(
    ("expression", "output", "expected"),
    [
        ("output == null", None, True),
        ("output != null", None, False),
        ("output == 1.0", 1, True),
        ("output[0] > 0.5", [1], True),
        ("output.n > 0", None, "does not support field selection"),
    ],
)
def test_an_output_that_is_not_a_map(expression: str, output: object, expected: bool | str) -> None:
    if isinstance(expected, bool):
        assert Conditions().holds(expression, output, SOURCE) is expected
    else:
        with pytest.raises(ConditionError, match=re.escape(expected)):
            Conditions().holds(expression, output, SOURCE)


@pytest.mark.parametrize(
    "expression",
    [
        'source.status == "COMPLETED"',
        "has(source.status)",
        'source["status"] != ""',
        "output.ok && source.status == 'x'",
    ],
)
def test_source_status_is_refused_naming_what_source_has(expression: str) -> None:
    message = "`source` has `task_id` and `version` only"
    with pytest.raises(ConditionError, match=re.escape(message)):
        Conditions().check(expression)
    with pytest.raises(ConditionError, match=re.escape(message)):
        Conditions().holds(expression, OUT, SOURCE)


def test_a_field_named_status_elsewhere_is_fine() -> None:
    conditions = Conditions()
    conditions.check('output.status == "done" && output.source.status == 1')
    assert conditions.holds('output.status == "done"', {"status": "done"}, SOURCE)


COMPARISONS: dict[str, Callable[[Any, Any], bool]] = {
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
    "==": operator.eq,
    "!=": operator.ne,
}
INT64 = st.integers(min_value=-(2**63), max_value=2**63 - 1)
DOUBLES = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False),
    INT64.map(float),  # doubles equal to (or next to) an int, so `==` is often true
    st.integers(min_value=-(2**60), max_value=2**60).map(lambda i: float(2**53 + i)),
)


@settings(max_examples=300, deadline=None)
@given(a=INT64, b=DOUBLES)
def test_int_and_double_compare_as_python_does(a: int, b: float) -> None:
    conditions = Conditions()
    output = {"a": a, "b": b}
    for symbol, compare in COMPARISONS.items():
        expected = compare(a, b)
        assert conditions.holds(f"output.a {symbol} output.b", output, SOURCE) is expected
        assert conditions.holds(f"output.b {symbol} output.a", output, SOURCE) is compare(b, a)
        assert conditions.holds(f"{a} {symbol} output.b", output, SOURCE) is expected
        assert conditions.holds(f"output.a {symbol} {b!r}", output, SOURCE) is expected


def test_an_integer_beyond_64_bits_in_the_output_is_a_clear_error() -> None:
    with pytest.raises(
        ConditionError, match=re.escape("cannot read the output: overflow (CEL integers are 64-bit")
    ):
        Conditions().holds("output.ok", {"ok": True, "id": 2**64}, SOURCE)


def test_a_condition_that_does_not_compile_says_so_with_the_expression() -> None:
    with pytest.raises(ConditionError, match=r"condition 'output.score >' does not compile"):
        Conditions().check("output.score >")
    with pytest.raises(ConditionError, match="empty"):
        Conditions().check("  ")


def test_map_iteration_is_the_same_every_time() -> None:
    output = {f"k{i}": i for i in range(50)}
    answers = {Conditions().holds("output.exists(k, output[k] == 7)", output, SOURCE) for _ in range(20)}
    assert answers == {True}


def test_paths_pick_values_and_name_the_missing_step() -> None:
    output = {"items": [{"name": "a"}, {"name": "b"}], "total": 2, "odd key": 1}
    assert value_at(output, "output") == output
    assert value_at(output, "output.items[1].name") == "b"
    assert value_at(output, "output.items[-1]") == {"name": "b"}
    assert value_at(output, 'output["odd key"]') == 1
    with pytest.raises(PathError, match=r"output.items has no item \[5\] \(it is a list of 2\)"):
        value_at(output, "output.items[5]")
    with pytest.raises(PathError, match=r"output has no field 'count'"):
        value_at(output, "output.count")
    with pytest.raises(PathError, match="must start with `output`"):
        value_at(output, "items[0]")
    with pytest.raises(PathError, match="cannot be read at"):
        value_at(output, "output..x")
