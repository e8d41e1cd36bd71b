"""Synapse's payload converter writes and reads what the SDK's pydantic converter does, and every
converter of the process (one per workflow run) shares its type adapters."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any

import pytest
from temporalio.contrib.pydantic import PydanticPayloadConverter

from contracts import InboundMessage, InteractionDecision, SessionConfig
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


@pytest.mark.parametrize(("value", "hint"), VALUES, ids=[type(v).__name__ for v, _ in VALUES])
def test_a_value_is_written_and_read_as_the_sdks_pydantic_converter_does(value: Any, hint: Any) -> None:
    ours, sdks = SynapsePayloadConverter(), PydanticPayloadConverter()
    [written] = ours.to_payloads([value])
    assert written == sdks.to_payloads([value])[0], "the same bytes and metadata"
    hints = None if hint is None else [hint]
    assert ours.from_payloads([written], hints) == sdks.from_payloads([written], hints) == [value]


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
