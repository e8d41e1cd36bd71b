"""`synapse schema DIR` writes one valid JSON Schema per contract model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import BaseModel

import contracts
from cli.main import main
from cli.schema import contract_models


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
        [*(f"{m.__name__}.json" for m in models), "openapi.json"]
    )
    assert capsys.readouterr().out.strip() == f"wrote {len(models)} JSON Schemas and openapi.json to {out}"


def test_schemas_are_strict_json(tmp_path: Path) -> None:
    assert main(["schema", str(tmp_path)]) == 0

    for model in contract_models():
        text = (tmp_path / f"{model.__name__}.json").read_text()
        schema = json.loads(text)
        assert schema["title"] == model.__name__
        assert text == json.dumps(schema, indent=2, sort_keys=True) + "\n"
        if model.model_config.get("extra") == "forbid":
            assert schema["additionalProperties"] is False, model.__name__


def test_request_models_forbid_unknown_fields(tmp_path: Path) -> None:
    main(["schema", str(tmp_path)])

    for name in ("InteractionDecision", "InboundMessage", "PlanBlueprint", "InterventionRequest"):
        schema = json.loads((tmp_path / f"{name}.json").read_text())
        assert schema["additionalProperties"] is False, name


def test_only_models_are_written(tmp_path: Path) -> None:
    main(["schema", str(tmp_path)])

    enums = [name for name in contracts.__all__ if not (tmp_path / f"{name}.json").exists()]
    assert enums, "constants and enums get no file"
    for name in enums:
        assert not (
            isinstance(getattr(contracts, name), type) and issubclass(getattr(contracts, name), BaseModel)
        )
