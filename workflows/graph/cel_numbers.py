"""Numbers in edge conditions as a JSON author expects them, not as bare CEL has them.

Bare CEL has no int/double conversion (`1 >= 0.5` is an error); `OPERATORS` replaces celpy's:
- `==`, `!=`, `<`, `<=`, `>`, `>=` compare any two numbers (int, uint, double) by exact value:
  `1 == 1.0`, `1 >= 0.5`, `-1 < 0.0`; an integer beyond 2^53 is never equal to a neighbouring
  double (`9007199254740993 != 9007199254740992.0`, Python's exact int/float comparison).
- `+`, `-`, `*`, `/` with an int (or uint) and a double turn the integer into a double and give
  a double: `2 * 0.5 == 1.0`, `output.n + 0.5 > 1`; doubles divide as IEEE 754 does (`1 / 0.0`
  is infinity, `0.0 / 0.0` is NaN, which equals nothing). Such a result is only as exact as a
  double: `9007199254740993 + 0.0 == 9007199254740992.0`.
- Two integers stay integers, as in CEL: `3 / 2 == 1` (truncated toward zero, `-3 / 2 == -1`),
  `1 / 0` is an error; write `3.0 / 2` or `double(output.done) / output.total` for 1.5. `%` takes
  two integers only; an int and a uint do not mix in arithmetic. `size()`, list indexes and map
  keys are unchanged (`output.items[0]`).
- `==` and `!=` compare lists and maps element by element by these rules (`[1] == [1.0]`), and
  `in` looks through a list by them; `x == null` is false for any x but null (CEL's
  heterogeneous equality), while ordering or arithmetic with null is an error.
- Bools, strings, `has()`, `size()` and the macros are celpy's own.

`OPERATORS` is given to each compiled program (`Conditions`); pure Python, no I/O.
"""

from __future__ import annotations

import json
import math
import operator
from collections.abc import Callable
from typing import Any

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from celpy import celtypes
    from celpy.evaluation import CELEvalError, base_functions, operator_in

Result = Any  # a celtypes value or a CELEvalError (celpy passes errors along as values)

_INTEGERS = (celtypes.IntType, celtypes.UintType)
_NUMBERS = (celtypes.IntType, celtypes.UintType, celtypes.DoubleType)  # BoolType is not one


def describe(value: Result) -> str:
    """A value as an error names it: its CEL type and, when short, the value."""
    if value is None:
        return "null"
    if isinstance(value, celtypes.BoolType):
        return f"bool {'true' if value else 'false'}"
    if isinstance(value, celtypes.UintType):
        return f"uint {int(value)}"
    if isinstance(value, celtypes.IntType):
        return f"int {int(value)}"
    if isinstance(value, celtypes.DoubleType):
        return f"double {float(value)!r}"
    if isinstance(value, celtypes.StringType):
        text = json.dumps(str(value), ensure_ascii=False)
        return f"string {text if len(text) <= 40 else text[:36] + '…' + text[-1]}"
    if isinstance(value, celtypes.ListType):
        return f"a list of {len(value)}"
    if isinstance(value, celtypes.MapType):
        return f"a map of {len(value)}"
    return type(value).__name__.removesuffix("Type").lower()


def _plain(number: Result) -> int | float:
    """A CEL number as a Python one, which compares int with float exactly."""
    return float(number) if isinstance(number, celtypes.DoubleType) else int(number)


def _cannot(symbol: str, left: Result, right: Result) -> CELEvalError:
    return CELEvalError(f"`{symbol}` does not apply to {describe(left)} and {describe(right)}")


def _equal(left: Result, right: Result) -> Result:
    """CEL `==` with numbers by value, lists and maps by element, and null unequal to all else."""
    if isinstance(left, CELEvalError):
        return left
    if isinstance(right, CELEvalError):
        return right
    if left is None or right is None:
        return celtypes.BoolType(left is None and right is None)
    if isinstance(left, _NUMBERS) and isinstance(right, _NUMBERS):
        return celtypes.BoolType(_plain(left) == _plain(right))
    if isinstance(left, celtypes.ListType) and isinstance(right, celtypes.ListType):
        if len(left) != len(right):
            return celtypes.BoolType(False)
        return _all_equal(zip(left, right, strict=True))
    if isinstance(left, celtypes.MapType) and isinstance(right, celtypes.MapType):
        if len(left) != len(right):
            return celtypes.BoolType(False)
        pairs = []
        for key, value in left.items():
            try:
                pairs.append((value, right[key]))
            except (KeyError, TypeError):  # TypeError: a key of another type on a hash collision
                return celtypes.BoolType(False)
        return _all_equal(pairs)
    try:
        return base_functions["_==_"](left, right)
    except TypeError:
        return _cannot("==", left, right)


def _all_equal(pairs: Any) -> Result:
    """False if any pair differs, else the first error, else True (CEL's `&&` over the pairs)."""
    error = None
    for left, right in pairs:
        same = _equal(left, right)
        if isinstance(same, CELEvalError):
            error = same if error is None else error
        elif not same:
            return celtypes.BoolType(False)
    return celtypes.BoolType(True) if error is None else error


def _not_equal(left: Result, right: Result) -> Result:
    same = _equal(left, right)
    return same if isinstance(same, CELEvalError) else celtypes.BoolType(not same)


def _contained(item: Result, container: Result) -> Result:
    """`in`: a list holds an item equal to it by `_equal`; maps (keys) are celpy's."""
    if isinstance(item, CELEvalError) or not isinstance(container, celtypes.ListType):
        return operator_in(item, container)
    error = None
    for element in container:
        same = _equal(item, element)
        if isinstance(same, CELEvalError):
            error = same if error is None else error
        elif same:
            return celtypes.BoolType(True)
    return celtypes.BoolType(False) if error is None else error


def _error_in(left: Result, right: Result) -> CELEvalError | None:
    """An operand that is an error already (it is passed on, as celpy does)."""
    if isinstance(left, CELEvalError):
        return left
    return right if isinstance(right, CELEvalError) else None


def _ordering(symbol: str, compare: Callable[[Any, Any], bool]) -> Callable[[Result, Result], Result]:
    celpy_own = base_functions[f"_{symbol}_"]

    def ordered(left: Result, right: Result) -> Result:
        if (error := _error_in(left, right)) is not None:
            return error
        if isinstance(left, _NUMBERS) and isinstance(right, _NUMBERS):
            return celtypes.BoolType(compare(_plain(left), _plain(right)))
        try:
            return celpy_own(left, right)
        except TypeError:
            return _cannot(symbol, left, right)

    return ordered


def _divide(left: float, right: float) -> float:
    """IEEE 754 division (Python raises on zero; celpy's gives +inf for `-1.0 / 0.0` and `0.0 / 0.0`)."""
    if right == 0.0:
        if left == 0.0 or math.isnan(left):
            return math.nan
        return math.copysign(math.inf, left) * math.copysign(1.0, right)
    return left / right


_DOUBLE_ARITHMETIC: dict[str, Callable[[float, float], float]] = {
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
    "/": _divide,
}


def _arithmetic(symbol: str) -> Callable[[Result, Result], Result]:
    celpy_own = base_functions[f"_{symbol}_"]
    on_doubles = _DOUBLE_ARITHMETIC[symbol]

    def combined(left: Result, right: Result) -> Result:
        if (error := _error_in(left, right)) is not None:
            return error
        if isinstance(left, _NUMBERS) and isinstance(right, _NUMBERS):
            if isinstance(left, celtypes.DoubleType) or isinstance(right, celtypes.DoubleType):
                # celpy would hand back a bare float here; keep results DoubleType for what follows
                return celtypes.DoubleType(on_doubles(float(left), float(right)))
        try:
            return celpy_own(left, right)  # integer overflow and division by zero: celpy's errors
        except TypeError:
            return _cannot(symbol, left, right)

    return combined


def _remainder(left: Result, right: Result) -> Result:
    if isinstance(left, CELEvalError):
        return left
    if isinstance(right, CELEvalError):
        return right
    if not (isinstance(left, _INTEGERS) and isinstance(right, _INTEGERS)):
        return _cannot("%", left, right)
    try:
        return base_functions["_%_"](left, right)
    except TypeError:  # an int and a uint
        return _cannot("%", left, right)


OPERATORS: dict[str, Callable[..., Result]] = {
    "_==_": _equal,
    "_!=_": _not_equal,
    "_<_": _ordering("<", operator.lt),
    "_<=_": _ordering("<=", operator.le),
    "_>_": _ordering(">", operator.gt),
    "_>=_": _ordering(">=", operator.ge),
    "_+_": _arithmetic("+"),
    "_-_": _arithmetic("-"),
    "_*_": _arithmetic("*"),
    "_/_": _arithmetic("/"),
    "_%_": _remainder,
    "_in_": _contained,
}
"""celpy's operators replaced for every condition (celpy looks operators up by these names)."""
