"""Synapse's payload converter: the SDK's pydantic one, with one cache of type adapters per process.

The worker makes a payload converter for every workflow run it holds, and the SDK's pydantic
converter caches the `TypeAdapter` it decodes each type with in the converter itself: every run
built anew the adapter of its input, of each message and of each answer (py-spy, approving 400
sessions: 3% of the process's samples). `SynapsePayloadConverter` decodes with adapters shared by
every converter of the process (`ADAPTERS_KEPT` types at most, least recently used dropped); what
it writes and reads is the SDK converter's, byte for byte.
"""

from __future__ import annotations

import functools
from typing import Any

from pydantic import TypeAdapter
from temporalio.api.common.v1 import Payload
from temporalio.contrib.pydantic import PydanticJSONPlainPayloadConverter
from temporalio.converter import (
    CompositePayloadConverter,
    DataConverter,
    DefaultPayloadConverter,
    JSONPlainPayloadConverter,
)

ADAPTERS_KEPT = 1024


@functools.lru_cache(maxsize=ADAPTERS_KEPT)
def adapter(type_hint: Any) -> TypeAdapter[Any]:
    """The process's adapter for `type_hint` (a hashable one)."""
    return TypeAdapter(type_hint)


class SharedAdaptersJson(PydanticJSONPlainPayloadConverter):
    """JSON payloads as the SDK's pydantic converter writes them, read with the shared adapters."""

    def __init__(self) -> None:
        super().__init__(max_cached_type_adapters=0)  # its own cache would go unused

    def from_payload(self, payload: Payload, type_hint: type | None = None) -> Any:
        hint: Any = type_hint if type_hint is not None else Any
        try:
            hash(hint)
        except TypeError:  # an unhashable hint cannot be cached
            return TypeAdapter(hint).validate_json(payload.data)
        return adapter(hint).validate_json(payload.data)


class SynapsePayloadConverter(CompositePayloadConverter):
    """The SDK's default encodings, with JSON read and written by `SharedAdaptersJson`."""

    def __init__(self) -> None:
        super().__init__(
            *(
                SharedAdaptersJson() if isinstance(c, JSONPlainPayloadConverter) else c
                for c in DefaultPayloadConverter.default_encoding_payload_converters
            )
        )


synapse_data_converter = DataConverter(payload_converter_class=SynapsePayloadConverter)
"""The pydantic data converter with the process's shared type adapters (no codec, no storage)."""
