"""Synapse's payload converter: the SDK's pydantic one, with one cache of type adapters per process.

The worker makes a payload converter for every workflow run it holds, and the SDK's pydantic
converter caches the `TypeAdapter` it decodes each type with in the converter itself: every run
built anew the adapter of its input, of each message and of each answer (py-spy, approving 400
sessions: 3% of the process's samples). `SynapsePayloadConverter` decodes with adapters shared by
every converter of the process (`ADAPTERS_KEPT` types at most, least recently used dropped), and
costs next to nothing to make (the SDK makes several for each workflow activation).

It writes what the SDK's converter writes without the fields that are None (`exclude_none`: a
field left unset reads back as None, the default of every optional contract field): most fields of
Synapse's models are optional and unset, and their `"x":null` were about a fifth of a turn's
payload bytes. Values inside dicts and lists (a tool's arguments, a task's input) are written
whole. It reads what either writes.
"""

from __future__ import annotations

import functools
from typing import Any

from pydantic import TypeAdapter
from pydantic_core import to_json
from temporalio.api.common.v1 import Payload
from temporalio.converter import (
    CompositePayloadConverter,
    DataConverter,
    DefaultPayloadConverter,
    EncodingPayloadConverter,
    JSONPlainPayloadConverter,
)

ADAPTERS_KEPT = 1024


@functools.lru_cache(maxsize=ADAPTERS_KEPT)
def adapter(type_hint: Any) -> TypeAdapter[Any]:
    """The process's adapter for `type_hint` (a hashable one)."""
    return TypeAdapter(type_hint)


class SharedAdaptersJson(EncodingPayloadConverter):
    """JSON payloads as the SDK's pydantic converter writes them (`pydantic_core.to_json`) without
    the model fields that are None, read with the shared adapters. It keeps nothing of its own: the SDK builds payload converters for
    every workflow activation (several data converters per activation, each with a new payload
    converter), and the SDK's pydantic JSON converter built a serializer schema and a cache each
    time (about a tenth of a millisecond)."""

    @property
    def encoding(self) -> str:
        """See base class."""
        return "json/plain"

    def to_payload(self, value: Any) -> Payload | None:
        """See base class."""
        return Payload(metadata={"encoding": b"json/plain"}, data=to_json(value, exclude_none=True))

    def from_payload(self, payload: Payload, type_hint: type | None = None) -> Any:
        """See base class."""
        hint: Any = type_hint if type_hint is not None else Any
        try:
            hash(hint)
        except TypeError:  # an unhashable hint cannot be cached
            return TypeAdapter(hint).validate_json(payload.data)
        return adapter(hint).validate_json(payload.data)


_CONVERTERS = tuple(
    SharedAdaptersJson() if isinstance(c, JSONPlainPayloadConverter) else c
    for c in DefaultPayloadConverter.default_encoding_payload_converters
)
"""The SDK's default encodings with JSON by `SharedAdaptersJson`; none of them keeps state."""


class SynapsePayloadConverter(CompositePayloadConverter):
    """The SDK's default encodings, with JSON read and written by `SharedAdaptersJson`."""

    def __init__(self) -> None:
        super().__init__(*_CONVERTERS)


synapse_data_converter = DataConverter(payload_converter_class=SynapsePayloadConverter)
"""The pydantic data converter with the process's shared type adapters (no codec, no storage)."""
