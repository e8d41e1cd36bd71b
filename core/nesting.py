"""How deeply JSON nests: one limit (`SYNAPSE_MAX_JSON_DEPTH`) for everything that enters a workflow.

Temporal's payloads are read back by pydantic's JSON parser, which stops at 200 levels, and
written by its serializer, which stops at 255. A value nested deeper than that can be accepted by
the API, and then never read by the worker: the graph never runs, the update fails to decode. So
every JSON value is held to a limit far below both: a request body is refused at the door
(`nested_too_deep`, read from its bytes without parsing it), and an agent's answer or a tool's
result is cut there (`cut_nesting`), each container past the limit replaced by a note.

Depth counts containers: `1` and `"a"` are level 0, `{}` and `[1]` level 1, `{"a": [1]}` level 2.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

DEFAULT_LIMIT = 64
"""`SYNAPSE_MAX_JSON_DEPTH` when unset."""

Path = tuple[str | int, ...]
"""Where a value stands: object keys and array indices from the top."""

TOKENS = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*(?:"|\\?\Z)|[\[\]{}:,]', re.DOTALL)
"""What the depth of JSON text turns on: strings (whose brackets count for nothing), brackets, and
the colons and commas that say which key or index the next value has. A string left open runs to
the end of the text: every string matches where it starts, so the scan never starts again inside
one and stays linear (a body of escaped quotes no longer costs the square of its length)."""
_OPEN = frozenset(b"{[")
_QUOTE = ord('"')


def nested_too_deep(text: bytes, limit: int) -> Path | None:
    """Where the JSON `text` first opens a container deeper than `limit` levels (the path of that
    container), or None when none is that deep. `text` is not parsed, so text too deep for any
    parser is read too; text that is not JSON gives None or a path that means nothing.

    Cheap for ordinary bodies: text with no more than `limit` brackets cannot nest deeper, and is
    not scanned."""
    if text.count(b"{") + text.count(b"[") <= limit:
        return None
    frames: list[list[Any]] = []  # per open container: [is an object, current key or index]
    last_string = b'""'
    for match in TOKENS.finditer(text):
        token = match.group()
        first = token[0]
        if first == _QUOTE:
            last_string = token
        elif first in _OPEN:
            if len(frames) == limit:
                return tuple(_key(frame[1]) if frame[0] else frame[1] for frame in frames)
            frames.append([first == ord("{"), b'""' if first == ord("{") else 0])
        elif token == b":":
            if frames:
                frames[-1][1] = last_string
        elif token == b",":
            if frames and not frames[-1][0]:
                frames[-1][1] += 1
        elif frames:  # a closing bracket
            frames.pop()
    return None


def _key(raw: bytes) -> str:
    try:
        key = json.loads(raw)
    except ValueError:
        return raw[1:-1].decode(errors="replace")
    return key if isinstance(key, str) else str(key)


def too_deep(value: Any, limit: int) -> Path | None:
    """Where `value` (dicts, lists and scalars) first holds a container deeper than `limit`
    levels, or None. Looks no deeper than `limit + 1` levels, however deep `value` is."""
    return _first_too_deep(value, limit, ())


def _first_too_deep(value: Any, room: int, path: Path) -> Path | None:
    items: Iterable[tuple[str | int, Any]]
    if isinstance(value, dict):
        items = value.items()
    elif isinstance(value, list | tuple):
        items = enumerate(value)
    else:
        return None
    if room == 0:
        return path
    for key, child in items:
        if isinstance(child, dict | list | tuple) and (
            found := _first_too_deep(child, room - 1, (*path, key))
        ):
            return found
    return None


def cut_note(limit: int) -> str:
    """What stands in for a container cut away."""
    return f"[cut: nested deeper than {limit} levels (SYNAPSE_MAX_JSON_DEPTH)]"


def cut_nesting(value: Any, limit: int) -> Any:
    """`value` with every container deeper than `limit` levels replaced by `cut_note(limit)`; the
    value itself (not a copy) when nothing is that deep."""
    if too_deep(value, limit) is None:
        return value
    return _cut(value, limit, cut_note(limit))


def _cut(value: Any, room: int, note: str) -> Any:
    if isinstance(value, dict):
        return {k: _cut(v, room - 1, note) for k, v in value.items()} if room > 0 else note
    if isinstance(value, list | tuple):
        return [_cut(v, room - 1, note) for v in value] if room > 0 else note
    return value
