"""`synapse schema DIR` writes one valid JSON Schema per contract model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import BaseModel

import contracts
from api.console import STATIC_DIR
from cli.events_js import events_module
from cli.main import main
from cli.schema import contract_models
from contracts import EVENT_MODELS


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """What `synapse schema DIR --events-js DIR/events.js` writes, written once for the module's tests
    (each run builds the API's OpenAPI document too, seconds on a loaded machine)."""
    out = tmp_path_factory.mktemp("schemas")
    assert main(["schema", str(out), "--events-js", str(out / "events.js")]) == 0
    return out


def test_writes_one_schema_per_model(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "nested" / "schemas"

    assert main(["schema", str(out)]) == 0

    models = [
        getattr(contracts, name)
        for name in contracts.__all__
        if isinstance(getattr(contracts, name), type) and issubclass(getattr(contracts, name), BaseModel)
    ]
    assert models, "contracts exports no models"
    assert sorted(p.name for p in out.iterdir()) == sorted(
        [*(f"{m.__name__}.json" for m in models), "events.json", "openapi.json"]
    )
    assert (
        capsys.readouterr().out.strip()
        == f"wrote {len(models)} JSON Schemas, events.json and openapi.json to {out}"
    )


def test_schemas_are_strict_json(written: Path) -> None:
    for model in contract_models():
        text = (written / f"{model.__name__}.json").read_text()
        schema = json.loads(text)
        assert schema["title"] == model.__name__
        assert text == json.dumps(schema, indent=2, sort_keys=True) + "\n"
        if model.model_config.get("extra") == "forbid":
            assert schema["additionalProperties"] is False, model.__name__


def test_request_models_forbid_unknown_fields(written: Path) -> None:
    for name in ("InteractionDecision", "InboundMessage", "PlanBlueprint", "InterventionRequest"):
        schema = json.loads((written / f"{name}.json").read_text())
        assert schema["additionalProperties"] is False, name


def test_only_models_are_written(written: Path) -> None:
    enums = [name for name in contracts.__all__ if not (written / f"{name}.json").exists()]
    assert enums, "constants and enums get no file"
    for name in enums:
        assert not (
            isinstance(getattr(contracts, name), type) and issubclass(getattr(contracts, name), BaseModel)
        )


def test_the_events_schema_names_each_events_chunk_type(written: Path) -> None:
    schema = json.loads((written / "events.json").read_text())
    named = {
        d["properties"]["event"]["const"]: d["x-chunk-type"]
        for d in schema["$defs"].values()
        if "x-chunk-type" in d
    }
    assert named == {model.model_fields["event"].default: model.chunk_type.value for model in EVENT_MODELS}


def test_the_consoles_events_module_is_generated_from_the_events_schema(written: Path) -> None:
    """`api/console/static/js/events.js` is what `make schema` writes: run it after changing an event."""
    checked_in = (STATIC_DIR / "js" / "events.js").read_text()
    assert checked_in == (written / "events.js").read_text(), (
        "api/console/static/js/events.js is stale: run `make schema`"
    )
    assert checked_in == events_module(json.loads((written / "events.json").read_text()))
