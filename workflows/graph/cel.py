"""CEL conditions on graph edges: compiled when a blueprint is accepted, evaluated in workflow code.

cel-python (`celpy`) is pure Python, keeps map order and does no I/O, so the same condition over
the same output gives the same answer on every replay (the Rust-backed `common-expression-language`
iterates maps in random order: it must never decide a branch here). A condition sees `output` (the
source task's output) and `source` (`{task_id, status, version}`) and must give a boolean; anything
else, or an evaluation error (a missing field, `1 == 1.0`), is a `ConditionError` the engine shows
on the edge, never a silent false.
"""

from __future__ import annotations

from typing import Any

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    import celpy
    from celpy import celtypes
    from celpy.adapter import json_to_cel


class ConditionError(Exception):
    """A condition that does not compile or cannot be evaluated; `str(err)` says why."""


def _where(err: Exception) -> str:
    """celpy's parse errors show the text with a caret; keep it on one line."""
    return " ".join(str(err).split())


class Conditions:
    """Compiled conditions of one graph (compiled once per expression, per workflow run)."""

    def __init__(self) -> None:
        self._env = celpy.Environment()
        self._programs: dict[str, Any] = {}

    def check(self, expression: str) -> None:
        """Raise `ConditionError` when `expression` does not compile."""
        self._program(expression)

    def holds(self, expression: str, output: Any, source: dict[str, Any]) -> bool:
        """Evaluate `expression` over `output` and `source`; True or False, else `ConditionError`."""
        program = self._program(expression)
        try:
            result = program.evaluate({"output": json_to_cel(output), "source": json_to_cel(source)})
        except Exception as err:  # celpy raises CELEvalError and plain Python errors alike
            raise ConditionError(f"condition {expression!r} failed: {_where(err)}") from err
        if isinstance(result, Exception):  # some evaluation errors are returned, not raised
            raise ConditionError(f"condition {expression!r} failed: {_where(result)}")
        if not isinstance(result, celtypes.BoolType):
            raise ConditionError(
                f"condition {expression!r} gave {type(result).__name__} {result!s}, not a boolean"
            )
        return bool(result)

    def _program(self, expression: str) -> Any:
        program = self._programs.get(expression)
        if program is None:
            if not expression.strip():
                raise ConditionError("the condition is empty: write a CEL expression over `output`")
            try:
                program = self._env.program(self._env.compile(expression))
            except Exception as err:
                raise ConditionError(f"condition {expression!r} does not compile: {_where(err)}") from err
            self._programs[expression] = program
        return program
