"""`api/calls/` knows no HTTP: no module in it imports FastAPI or Starlette, or the rest of `api/`."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import api.calls

CALLS = Path(api.calls.__file__).parent
MODULES = sorted(CALLS.glob("*.py"))
HTTP = ("fastapi", "starlette")


def imported(path: Path) -> list[tuple[int, str]]:
    """Each import of the module as (line, absolute module name); relative ones resolved."""
    package = ["api", "calls"]
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            found += [
                (node.lineno, f"{module}.{alias.name}" if not node.module else module) for alias in node.names
            ]
    return found


def test_the_layer_has_modules() -> None:
    assert {"errors.py", "workflow.py", "sessions.py", "graphs.py", "decisions.py"} <= {
        p.name for p in MODULES
    }


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.name)
def test_a_call_module_imports_no_http(path: Path) -> None:
    for line, module in imported(path):
        top = module.split(".")[0]
        assert top not in HTTP, f"api/calls/{path.name}:{line} imports {module}: the call layer knows no HTTP"
        assert top != "api" or module.startswith("api.calls"), (
            f"api/calls/{path.name}:{line} imports {module}: the call layer uses nothing of api/ above it"
        )


def test_imports_are_read_as_they_resolve(tmp_path: Path) -> None:
    source = tmp_path / "example.py"
    source.write_text(
        "import fastapi.responses\nfrom starlette.requests import Request\nfrom . import busy\nfrom ..deps import X\n"
    )
    assert [module for _, module in imported(source)] == [
        "fastapi.responses",
        "starlette.requests",
        "api.calls.busy",
        "api.deps",
    ]
