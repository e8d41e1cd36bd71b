"""Edge conditions (CEL) and data-flow paths: what a blueprint author writes, and what they get back."""

from __future__ import annotations

import pytest

from workflows.graph.cel import ConditionError, Conditions
from workflows.graph.paths import PathError, value_at

SOURCE = {"task_id": "score", "status": "COMPLETED", "version": 1}


@pytest.mark.parametrize(
    ("expression", "output", "expected"),
    [
        ("output.score > 0.5", {"score": 0.7}, True),
        ("output.score > 0.5", {"score": 0.2}, False),
        ('source.status == "COMPLETED" && size(output.items) == 2', {"items": [1, 2]}, True),
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
        ("output.score", {"score": 0.7}, "gave DoubleType 0.7, not a boolean"),
        ("output.n == 1.0", {"n": 1}, "failed"),
    ],
)
def test_a_condition_that_cannot_be_evaluated_is_an_error_not_false(
    expression: str, output: object, message: str
) -> None:
    with pytest.raises(ConditionError, match=message.replace("(", r"\(").replace(".", r"\.")):
        Conditions().holds(expression, output, SOURCE)


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
