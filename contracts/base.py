"""The base every contract model shares: strict, documented, one model per message."""

from __future__ import annotations

import typing
from functools import cache
from typing import Any

from pydantic import BaseModel, ConfigDict, SerializationInfo, SerializerFunctionWrapHandler, model_serializer
from pydantic_core import to_jsonable_python


class Contract(BaseModel):
    """Base of every Synapse contract: strict (unknown fields are rejected).

    A field whose seed name is ambiguous has a precise Python name and keeps the seed's name on the
    wire as its alias (`InteractionRequest.workflow_id` is `task_id` in JSON): models are read by
    either name and always written by the alias, so payloads, histories and the HTTP API keep the
    seeds' names.

    What people send is read as its schema says: the numbers and switches of request bodies are
    `StrictInt` / `StrictBool`, so JSON `true` is not the number 1 and `"1"` is not a decision
    (pydantic would otherwise convert them; `make fuzz` found `question_timeout_seconds: true`
    accepted)."""

    model_config = ConfigDict(
        extra="forbid", validate_by_name=True, validate_by_alias=True, serialize_by_alias=True
    )


@cache
def _defaults(model: type[BaseModel]) -> dict[str, Any]:
    """The JSON form of each field's default as payloads write it (None fields left out), by the name
    it is written under (fields whose default is made anew each time, a time or an id, never match
    it and are always written)."""
    return {
        field.serialization_alias or field.alias or name: to_jsonable_python(
            field.get_default(call_default_factory=True, validated_data={}), exclude_none=True
        )
        for name, field in model.model_fields.items()
        if not field.is_required()
    }


class CompactContract(Contract):
    """A contract Temporal payloads carry without the fields at their defaults: Synapse's payload
    converter writes with `exclude_none` (`core/payloads.py`), and these models then leave out every
    field whose value is its default too (the model reads it back as that default). HTTP and every
    other dump write them whole.

    For the few large models a turn carries one of at a time (a session's run input and config, an
    agent's reference, a step's input and result, a call's assessment, a message in): leaving the
    defaults out runs Python per model, about doubling its encoding, so models kept by the hundred
    (conversation messages, audit entries, outcomes) stay plain. Their defaults are part of the wire
    format, so changing a default changes what older payloads read as (a versioned change). A
    discriminator tag (a `Literal` field with a default) would be left out too, so no compact model
    has one (checked when it is defined)."""

    @model_serializer(mode="wrap")
    def _compact(self, handler: SerializerFunctionWrapHandler, info: SerializationInfo) -> Any:
        data = handler(self)
        if not info.exclude_none or not isinstance(data, dict):
            return data
        defaults = _defaults(type(self))
        return {key: value for key, value in data.items() if key not in defaults or value != defaults[key]}

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        """Refuse a discriminator tag: it must always be written."""
        super().__pydantic_init_subclass__(**kwargs)
        for name, field in cls.model_fields.items():
            tag = (
                typing.get_origin(field.annotation) is typing.Literal
                and len(typing.get_args(field.annotation)) == 1
            )
            if tag and not field.is_required():
                raise TypeError(f"{cls.__name__}.{name}: a compact contract cannot have a defaulted tag")
