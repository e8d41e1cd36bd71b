"""CEL conditions on graph edges: compiled when a blueprint is accepted, evaluated in workflow code.

cel-python (`celpy`) is pure Python, keeps map order and does no I/O, so the same condition over
the same output gives the same answer on every replay (the Rust-backed `common-expression-language`
iterates maps in random order: it must never decide a branch here). A condition sees `output` (the
source task's output, as JSON) and `source` (`{task_id, version}`; a condition is evaluated only
once its source completed, so there is no `source.status`, and a condition naming it is refused)
and must give a boolean; anything else, or an evaluation error (a missing field, `null > 1`,
`"a" < 1`), is a `ConditionError` the engine shows on the edge, never a silent false.

Numbers follow `cel_numbers` (`1 == 1.0`, `1 >= 0.5`, `2 * 0.5 == 1.0`).

Changing what a condition answers changes the branches a graph takes: a graph that evaluated an
edge under other rules takes another path on replay, so such a change is gated
(`workflows/versioning`), decided when the graph starts.
"""

from __future__ import annotations

import re
from typing import Any

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    import celpy
    import lark
    from celpy import celtypes
    from celpy.adapter import json_to_cel
    from celpy.evaluation import CELEvalError

from .cel_numbers import OPERATORS, describe


class ConditionError(Exception):
    """A condition that does not compile or cannot be evaluated; `str(err)` says why."""


def _where(err: Exception) -> str:
    """The message of a celpy error on one line (parse errors show the text with a caret)."""
    if isinstance(err, CELEvalError) and err.args and isinstance(err.args[0], str):
        text = err.args[0]
        if len(err.args) >= 3 and err.args[2] and err.args[0] != "return error for overflow":
            text += ": " + "; ".join(str(arg) for arg in err.args[2])
    else:
        text = str(err)
    text = re.sub(r"<class 'celpy\.celtypes\.(\w+?)(?:Type)?'>", lambda m: m[1].lower(), text)
    return " ".join(text.split())


def _names_source_status(ast: lark.Tree[Any]) -> bool:
    """`source.status` or `source["status"]` anywhere in the expression."""

    def is_source(node: Any) -> bool:
        while isinstance(node, lark.Tree) and len(node.children) == 1:
            if node.data == "ident":
                return bool(node.children[0] == "source")
            node = node.children[0]
        return False

    def is_status_literal(node: Any) -> bool:
        while isinstance(node, lark.Tree) and len(node.children) == 1:
            node = node.children[0]
        return isinstance(node, lark.Token) and node.type == "STRING_LIT" and node.strip("rR'\"") == "status"

    for node in ast.iter_subtrees():
        if node.data == "member_dot" and node.children[1] == "status" and is_source(node.children[0]):
            return True
        if (
            node.data == "member_index"
            and is_source(node.children[0])
            and is_status_literal(node.children[1])
        ):
            return True
    return False


def prepare_parser() -> None:
    """Build celpy's parser, shared by every graph, before any workflow task needs it (`celpy` is
    passed through the sandbox, so this one serves them all). Built inside a graph's first workflow
    task instead, it takes seconds on a slow machine, past the deadlock detector's two."""
    celpy.Environment()


class Conditions:
    """Compiled conditions of one graph (compiled once per expression, per workflow run)."""

    def __init__(self) -> None:
        self._env = celpy.Environment()
        self._programs: dict[str, Any] = {}

    def check(self, expression: str) -> None:
        """Raise `ConditionError` when `expression` does not compile or names `source.status`."""
        self._program(expression)

    def holds(self, expression: str, output: Any, source: dict[str, Any]) -> bool:
        """Evaluate `expression` over `output` and `source`; True or False, else `ConditionError`."""
        program = self._program(expression)
        try:
            facts = {"output": json_to_cel(output), "source": json_to_cel(source)}
        except (ValueError, TypeError) as err:  # an integer beyond 64 bits, a non-JSON value
            raise ConditionError(
                f"condition {expression!r} cannot read the output: {_where(err)}"
                " (CEL integers are 64-bit; JSON values only)"
            ) from err
        try:
            result = program.evaluate(facts)
        except Exception as err:  # celpy raises CELEvalError and plain Python errors alike
            raise ConditionError(f"condition {expression!r} failed: {_where(err)}") from err
        if isinstance(result, Exception):  # some evaluation errors are returned, not raised
            raise ConditionError(f"condition {expression!r} failed: {_where(result)}")
        if not isinstance(result, celtypes.BoolType):
            raise ConditionError(f"condition {expression!r} gave {describe(result)}, not a boolean")
        return bool(result)

    def _program(self, expression: str) -> Any:
        program = self._programs.get(expression)
        if program is None:
            if not expression.strip():
                raise ConditionError("the condition is empty: write a CEL expression over `output`")
            try:
                ast = self._env.compile(expression)
            except Exception as err:
                raise ConditionError(f"condition {expression!r} does not compile: {_where(err)}") from err
            if _names_source_status(ast):
                raise ConditionError(
                    f"condition {expression!r} reads source.status: `source` has `task_id` and "
                    "`version` only (a condition is evaluated once its source task completed)"
                )
            program = self._env.program(ast, functions=OPERATORS)
            self._programs[expression] = program
        return program
