"""Every kind of event workflows publish is in at least one recorded history (issue 49).

A history holds the events a workflow published wherever they left it: a `watch` answer (an
update's result), a stream carried across continue-as-new (its items are encoded `Payload`s), a
signal to a parent session (`graph_progress`), a delivery to a chat. Replaying those histories is
what proves that a change to an event's model still reads what runs already hold, so a kind no
history holds is a kind replay does not check. Fast: reads the files, no server.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

from temporalio.api.common.v1 import Payload

from contracts.events import EVENT_MODELS

HERE = Path(__file__).parent
KINDS = frozenset(str(model.model_fields["event"].default) for model in EVENT_MODELS)
"""Every event kind of `contracts.events` (each model's `event`)."""
PUBLISHED_ELSEWHERE: dict[str, str] = {}
"""Kinds no workflow publishes, and who does (none today: the API and the CLI only read events)."""


def _values(node: Any) -> Iterator[Any]:
    """Every value in a JSON document, payloads decoded: a history's (`metadata` + `data`, JSON
    in base64) and a stream's items (`topic` + `data`, a serialized `Payload` in base64)."""
    yield node
    if isinstance(node, list):
        for item in node:
            yield from _values(item)
    elif isinstance(node, dict):
        data = node.get("data")
        if isinstance(data, str) and ("metadata" in node or "topic" in node):
            raw = base64.b64decode(data)
            if "topic" in node:
                raw = Payload.FromString(raw).data
            try:
                yield from _values(json.loads(raw))
            except ValueError:  # a payload that is not JSON (binary/null, bytes)
                pass
        for value in node.values():
            yield from _values(value)


def kinds_in(path: Path) -> set[str]:
    """The event kinds a recorded history holds."""
    return {
        node["event"]
        for node in _values(json.loads(path.read_text()))
        if isinstance(node, dict) and isinstance(node.get("event"), str) and node["event"] in KINDS
    }


@cache
def recorded() -> dict[str, set[str]]:
    """Each history's file stem → the kinds it holds."""
    paths = sorted(p for p in HERE.glob("*.json") if p.name != "workflow_ids.json")
    return {path.stem: kinds_in(path) for path in paths}


def test_every_kind_workflows_publish_is_in_a_history() -> None:
    seen = set().union(*recorded().values())
    missing = sorted(KINDS - seen - set(PUBLISHED_ELSEWHERE))
    assert missing == [], (
        f"{len(missing)} event kinds are in no recorded history: {', '.join(missing)}; add a scenario "
        "that publishes them to tests/histories/record.py (with a watcher following its stream) and "
        "record it"
    )


def test_the_exceptions_are_still_exceptions() -> None:
    """An exempted kind that a history now holds, or that no longer exists, leaves the list."""
    seen = set().union(*recorded().values())
    exempt = set(PUBLISHED_ELSEWHERE)
    assert exempt <= KINDS, f"not event kinds: {sorted(exempt - KINDS)}"
    assert not exempt & seen, f"recorded now, no longer exempt: {sorted(exempt & seen)}"
