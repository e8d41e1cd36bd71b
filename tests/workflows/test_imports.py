"""Workflow code imports nothing heavy and brings contracts in through the sandbox's pass-through.

A workflow module that imported an activity, an SDK (google-adk, LangGraph, lark-oapi), a
database driver or the network would load it into every workflow sandbox (slow) or do I/O in
workflow code (non-deterministic). And `contracts` imported outside
`workflow.unsafe.imports_passed_through()` gets a second copy of every model inside the sandbox
of a worker that does not pass `workflows` through (the `Replayer`): a model from one copy is not
an instance of the other's, and a running workflow fails.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
MODULES = sorted((ROOT / "workflows").rglob("*.py"))
ALLOWED = ("workflows", "contracts", "temporalio", "pydantic", "celpy", "lark", "__future__")
"""`lark` is the parser CEL is built on (not lark-oapi, which is `lark_oapi`)."""
STDLIB_OK = (
    "asyncio", "collections", "dataclasses", "datetime", "enum", "functools", "itertools", "json",
    "math", "re", "typing", "decimal", "operator", "contextlib", "weakref", "unicodedata",
)  # fmt: skip


def _imports(tree: ast.Module) -> list[tuple[str, bool]]:
    """Every module imported at the top level of a file, and whether it is passed through."""
    found: list[tuple[str, bool]] = []

    def visit(nodes: list[ast.stmt], passed: bool) -> None:
        for node in nodes:
            if isinstance(node, ast.Import):
                found.extend((alias.name, passed) for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.append((node.module, passed))
            elif isinstance(node, ast.With):
                through = any(
                    "imports_passed_through" in ast.unparse(item.context_expr) for item in node.items
                )
                visit(node.body, passed or through)

    visit(tree.body, False)
    return found


@pytest.mark.parametrize("path", MODULES, ids=[str(p.relative_to(ROOT)) for p in MODULES])
def test_a_workflow_module_imports_nothing_heavy(path: Path) -> None:
    for module, passed in _imports(ast.parse(path.read_text())):
        top = module.split(".")[0]
        assert top in ALLOWED or top in STDLIB_OK, f"{path.name} imports {module}"
        state_model = path.name == "state.py"  # imported only through the pass-through itself
        if top == "contracts" and not state_model:
            assert passed, f"{path.name} imports {module} outside imports_passed_through()"
