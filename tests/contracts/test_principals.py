"""One spelling per person, in every contract that names one (`contracts.principals`)."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest
from pydantic import BaseModel

import contracts
from contracts import Decision, DecisionPolicy, DecisionSource, InteractionRequest, Verdict, person
from contracts.base import Contract

PERSON_FIELDS = {
    "principal",
    "approvers",
    "approved_by",
    "approvals",
    "decided_by",
    "requested_by",
    "created_by",
    "deleted_by",
    "granted_by",
    "revoked_by",
    "added_by",
    "rolled_back_by",
    "asked_by",
    "escalate_to",
    "escalated_to",
    "sender_id",
    "sender",
    "mentions",
    "user",
    "by",
}
"""Names of the fields that hold a person (or people) wherever a contract has them."""


def contract_models() -> list[type[BaseModel]]:
    """Every contract model of every module of `contracts`."""
    found: dict[str, type[BaseModel]] = {}
    for module in pkgutil.iter_modules(contracts.__path__):
        loaded = importlib.import_module(f"contracts.{module.name}")
        for _, model in inspect.getmembers(loaded, inspect.isclass):
            if issubclass(model, Contract) and model is not Contract:
                found[f"{model.__module__}.{model.__qualname__}"] = model
    return sorted(found.values(), key=lambda model: model.__name__)


def test_a_lark_open_id_is_one_person_with_or_without_its_prefix() -> None:
    assert person("lark:ou_1") == person("ou_1") == "ou_1"
    assert person("alice") == "alice"
    assert person("dingtalk:u_1") == "dingtalk:u_1", "only Lark's prefix names the bare id"
    assert person("lark:") == "lark:", "a bare prefix names nobody else"
    assert person("rule:rule_1") == "rule:rule_1"
    assert person("system:timeout") == "system:timeout"


@pytest.mark.parametrize("model", contract_models(), ids=lambda model: model.__name__)
def test_every_field_that_names_a_person_is_a_person_id(model: type[BaseModel]) -> None:
    for name, field in model.model_fields.items():
        if name in PERSON_FIELDS:
            spelled = repr(field.annotation) + repr(field.metadata)
            assert "person" in spelled, f"{model.__name__}.{name} is {field.annotation}, not a PersonId"


def test_models_spell_each_person_one_way_however_they_are_built() -> None:
    decision = Decision(
        interaction_id="tool_1",
        principal="lark:ou_1",
        channel="http",
        source=DecisionSource.HTTP,
        said=Verdict(approved=True),
    )
    assert decision.principal == "ou_1"
    assert Decision.model_validate_json(decision.model_dump_json()).principal == "ou_1"
    wire = decision.model_dump(mode="json") | {"principal": "lark:ou_1"}
    assert Decision.model_validate(wire).principal == "ou_1", "a history's old spelling reads as the one"
    policy = DecisionPolicy(approvers=["lark:ou_1", "bob"], escalate_to=["lark:ou_2"])
    assert (policy.approvers, policy.escalate_to) == (["ou_1", "bob"], ["ou_2"])
    assert DecisionPolicy().approvers is None
    request = InteractionRequest.model_validate(
        {
            "interaction_id": "tool_1",
            "interaction_type": "tool_approval",
            "task_id": "session:s",
            "content": {},
            "timestamp": "2026-01-01T00:00:00Z",
            "approvers": ["lark:ou_1", "ou_2"],
            "approved_by": ["lark:ou_1"],
            "requested_by": "lark:ou_3",
            "escalate_to": ["lark:ou_4"],
            "ask": {"kind": "tool_approval", "tool": "sql"},
        }
    )
    assert request.approvers == ["ou_1", "ou_2"]
    assert (request.approved_by, request.requested_by, request.escalate_to) == (["ou_1"], "ou_3", ["ou_4"])
