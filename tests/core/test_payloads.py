"""Synapse's payload converter writes what the SDK's pydantic converter does without the model
fields that are None, each reads what the other writes, and every converter of the process (one
per workflow run) shares its type adapters."""

from __future__ import annotations

import importlib
import json
import pkgutil
import types
import typing
from datetime import UTC, datetime
from typing import Annotated, Any

import pytest
from pydantic import BaseModel
from temporalio.contrib.pydantic import PydanticPayloadConverter

import contracts
from contracts import FinalAnswer, InboundMessage, InteractionDecision, SessionConfig, UniversalMessage
from contracts.base import CompactContract
from core.payloads import SynapsePayloadConverter, adapter
from workflows.session.state import SessionRunInput

VALUES: list[tuple[Any, Any]] = [
    (InboundMessage(content="hello", sender_id="alice", chat_id="c"), InboundMessage),
    (SessionRunInput(config=SessionConfig(session_key="k"), generation=1), SessionRunInput),
    ([InteractionDecision(interaction_id="tool_1", approved=True)], list[InteractionDecision]),
    ({"a": [1, 2], "b": None}, dict[str, Any]),
    (datetime(2026, 11, 27, 6, 0, tzinfo=UTC), datetime),
    ("text", None),
    (None, None),
    (b"\x00bytes", bytes),
]


def _without_nulls(value: Any, model: bool) -> Any:
    """The SDK's JSON of a value without the None fields of its models (dicts inside kept whole)."""
    if isinstance(value, dict) and model:
        return {k: _without_nulls(v, True) for k, v in value.items() if v is not None}
    return value


@pytest.mark.parametrize(("value", "hint"), VALUES, ids=[type(v).__name__ for v, _ in VALUES])
def test_a_value_is_written_as_the_sdk_writes_it_without_null_fields_and_read_back(
    value: Any, hint: Any
) -> None:
    ours, sdks = SynapsePayloadConverter(), PydanticPayloadConverter()
    [written], [theirs] = ours.to_payloads([value]), sdks.to_payloads([value])
    assert written.metadata == theirs.metadata
    if isinstance(value, BaseModel):
        assert len(written.data) < len(theirs.data), "the unset fields are left out"
        if not isinstance(value, CompactContract):  # which leaves out its defaults too (below)
            assert json.loads(written.data) == _without_nulls(json.loads(theirs.data), True)
    elif not isinstance(value, list):
        assert written == theirs, "a plain value is written as the SDK writes it, nulls in dicts too"
    hints = None if hint is None else [hint]
    assert ours.from_payloads([written], hints) == sdks.from_payloads([written], hints) == [value]
    assert ours.from_payloads([theirs], hints) == [value], "what the SDK wrote (older histories) reads too"


def test_a_required_value_that_is_none_reads_back() -> None:
    for value in (
        UniversalMessage(role="tool", content=None),
        FinalAnswer(content=None),
        UniversalMessage(role="user", content={"sql": None}),
    ):
        [written] = SynapsePayloadConverter().to_payloads([value])
        assert SynapsePayloadConverter().from_payloads([written], [type(value)]) == [value]


def _admits_none(annotation: Any) -> bool:
    if annotation is Any or annotation is None or annotation is type(None):
        return True
    origin = typing.get_origin(annotation)
    if origin is Annotated:
        return _admits_none(typing.get_args(annotation)[0])
    return origin in (typing.Union, types.UnionType) and any(
        _admits_none(a) for a in typing.get_args(annotation)
    )


def test_every_contract_field_that_may_be_none_reads_back_as_none_when_left_out() -> None:
    """A None field is not written, so every field that may be None must default to None: else a
    payload would not read back (required) or would read back as another value (its default)."""
    models = {
        model
        for module in pkgutil.iter_modules(contracts.__path__)
        for model in vars(importlib.import_module(f"contracts.{module.name}")).values()
        if isinstance(model, type) and issubclass(model, BaseModel)
    }
    wrong = sorted(
        f"{model.__name__}.{name}"
        for model in models
        for name, field in model.model_fields.items()
        if _admits_none(field.annotation)
        and (field.is_required() or field.default_factory is not None or field.default is not None)
    )
    assert wrong == []


def test_a_second_run_s_converter_reuses_the_adapters_the_first_built() -> None:
    message = InboundMessage(content="hi", sender_id="bob")
    [payload] = SynapsePayloadConverter().to_payloads([message])
    SynapsePayloadConverter().from_payloads([payload], [InboundMessage])  # the first run
    built = adapter.cache_info().misses
    assert SynapsePayloadConverter().from_payloads([payload], [InboundMessage]) == [message]  # another run
    assert adapter.cache_info().misses == built, "no adapter built again"


def test_an_unhashable_hint_is_read_without_the_cache() -> None:
    hint: Any = Annotated[list[int], {"metadata": "a dict, which has no hash"}]
    with pytest.raises(TypeError):
        hash(hint)
    [payload] = SynapsePayloadConverter().to_payloads([[1, 2]])
    cached = adapter.cache_info().currsize
    assert SynapsePayloadConverter().from_payloads([payload], [hint]) == [[1, 2]]
    assert adapter.cache_info().currsize == cached


def test_converters_share_their_parts_so_making_one_per_activation_costs_nothing() -> None:
    first, second = SynapsePayloadConverter(), SynapsePayloadConverter()
    assert first is not second
    assert all(a is b for a, b in zip(first.converters.values(), second.converters.values(), strict=True))


def test_a_compact_contract_leaves_its_defaults_out_of_payloads_only() -> None:
    config = SessionConfig(session_key="k", max_turns=3, approvers=[])
    [written] = SynapsePayloadConverter().to_payloads([config])
    assert json.loads(written.data) == {"session_key": "k", "max_turns": 3}, "only what differs"
    assert SynapsePayloadConverter().from_payloads([written], [SessionConfig]) == [config]
    assert '"approval_timeout_seconds":300' in config.model_dump_json(), "HTTP and dumps write it whole"


def test_a_compact_contract_cannot_have_a_defaulted_tag() -> None:
    with pytest.raises(TypeError, match=r"Tagged\.kind: a compact contract cannot have a defaulted tag"):

        class Tagged(CompactContract):
            kind: typing.Literal["tagged"] = "tagged"
