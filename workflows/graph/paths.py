"""Data-flow paths: `output.items[0].name` picks a value out of a source task's output.

A path starts with `output` and goes on with `.key` and `[index]` steps. Pure and deterministic.
"""

from __future__ import annotations

import re
from typing import Any

_STEP = re.compile(r"\.([A-Za-z_][A-Za-z0-9_\-]*)|\[(-?\d+)\]|\[\"([^\"]*)\"\]")


class PathError(Exception):
    """A path that is malformed or does not lead to a value; `str(err)` says where it stops."""


def steps_of(path: str) -> list[str | int]:
    """The steps after `output`, or `PathError` when `path` is not a data-flow path."""
    if not path.startswith("output"):
        raise PathError(f"{path!r} must start with `output` (e.g. `output.items[0].name`)")
    rest, steps = path[len("output") :], []
    while rest:
        match = _STEP.match(rest)
        if match is None:
            raise PathError(f"{path!r} cannot be read at {rest!r}: use `.key` or `[index]` steps")
        key, index, quoted = match.groups()
        steps.append(int(index) if index is not None else key if key is not None else quoted)
        rest = rest[match.end() :]
    return steps


def value_at(output: Any, path: str) -> Any:
    """The value `path` names in `output`, or `PathError` saying which step is missing."""
    value, walked = output, "output"
    for step in steps_of(path):
        if isinstance(step, int):
            if not isinstance(value, list) or not -len(value) <= step < len(value):
                raise PathError(f"{walked} has no item [{step}] (it is {_kind(value)})")
            value, walked = value[step], f"{walked}[{step}]"
        else:
            if not isinstance(value, dict) or step not in value:
                raise PathError(f"{walked} has no field {step!r} (it is {_kind(value)})")
            value, walked = value[step], f"{walked}.{step}"
    return value


def _kind(value: Any) -> str:
    if isinstance(value, dict):
        return f"an object with {', '.join(map(repr, list(value)[:5])) or 'no fields'}"
    if isinstance(value, list):
        return f"a list of {len(value)}"
    return f"{type(value).__name__} {value!r}"[:80]
