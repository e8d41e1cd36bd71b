"""`synapse schema DIR`: the JSON Schema of every contract model, one file per model, the stream's
events (`events.json`, the union `contracts.events.StreamEvent`), and the HTTP API's OpenAPI
document (`openapi.json`, the same document the API serves). `--events-js FILE` writes the
console's `events.js` from the events' schema (`cli.events_js`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel

import contracts
from core.settings import Settings

from .events_js import events_module, events_schema


def contract_models() -> list[type[BaseModel]]:
    """Every Pydantic model named in `contracts.__all__`, in that order."""
    exported = (getattr(contracts, name) for name in contracts.__all__)
    return [obj for obj in exported if isinstance(obj, type) and issubclass(obj, BaseModel)]


def model_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The JSON Schema of `model`, with the model's own object schema at the top level.

    Pydantic answers a self-referencing model (e.g. `TaskDefinition`) with only a `$ref` into
    `$defs`; the referenced definition is hoisted so every file starts with the model's
    `properties` and `additionalProperties`. `$defs` stays, so inner references still resolve.
    """
    schema = model.model_json_schema()
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/") and "properties" not in schema:
        return {**schema["$defs"][ref.removeprefix("#/$defs/")], "$defs": schema["$defs"]}
    return schema


def write_schemas(directory: Path) -> list[Path]:
    """Write `<directory>/<Model>.json` for every contract model (indent 2, sorted keys).

    Args:
        directory: Where the files go; created if missing.

    Returns:
        The files written.
    """
    directory.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for model in contract_models():
        path = directory / f"{model.__name__}.json"
        path.write_text(json.dumps(model_schema(model), indent=2, sort_keys=True) + "\n")
        written.append(path)
    return written


def openapi_document(settings: Settings | None = None) -> dict[str, Any]:
    """The OpenAPI document of the API as configured (API keys on or off change it)."""
    from api.main import create_app  # the API layer is only needed here

    document: dict[str, Any] = create_app(settings or Settings()).openapi()
    return document


def schema(directory: Path, events_js: Path | None = None) -> int:
    """`synapse schema DIR`: write the schemas, the events' schema and the OpenAPI document, and say
    how many; with `events_js`, the console's `events.js` too.

    Returns:
        The exit code.
    """
    written = write_schemas(directory)
    events = events_schema()
    (directory / "events.json").write_text(json.dumps(events, indent=2, sort_keys=True) + "\n")
    (directory / "openapi.json").write_text(json.dumps(openapi_document(), indent=2, sort_keys=True) + "\n")
    print(f"wrote {len(written)} JSON Schemas, events.json and openapi.json to {directory}")
    if events_js is not None:
        events_js.write_text(events_module(events))
        print(f"wrote {events_js}")
    return 0
