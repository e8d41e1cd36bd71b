"""Events to test with: any event built from valid fields (a hypothesis strategy), and one
deterministic sample of each kind.

Both walk a model's fields by their types (strings, numbers, enums, literals, lists, dicts, JSON
values, nested models, unions); a value a field's constraints refuse (`min_length`, `ge`) is
drawn again, so every event drawn is one a workflow could publish.
"""

from __future__ import annotations

import types
from datetime import UTC, datetime
from enum import Enum
from typing import Annotated, Any, Literal, TypeVar, Union, get_args, get_origin

from hypothesis import strategies as st
from pydantic import BaseModel, JsonValue, ValidationError
from pydantic.fields import FieldInfo

from contracts import ARTIFACT_ID_PATTERN, EVENT_MODELS, EventModel

M = TypeVar("M", bound=BaseModel)

JSON: st.SearchStrategy[Any] = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)
"""Any JSON value."""


def strategy_for(annotation: Any) -> st.SearchStrategy[Any]:
    """Values of a field annotated `annotation` (before the model's own validation)."""
    if annotation is Any or annotation is JsonValue:
        return JSON
    origin = get_origin(annotation)
    if origin is Annotated:
        return strategy_for(get_args(annotation)[0])
    if origin in (Union, types.UnionType):
        return st.one_of(*(strategy_for(arg) for arg in get_args(annotation)))
    if origin is Literal:
        return st.sampled_from(get_args(annotation))
    if origin is list:
        return st.lists(strategy_for(get_args(annotation)[0]), max_size=3)
    if origin is dict:
        key, value = get_args(annotation)
        return st.dictionaries(strategy_for(key), strategy_for(value), max_size=3)
    if annotation is type(None):
        return st.none()
    if isinstance(annotation, type):
        if issubclass(annotation, BaseModel):
            return model_strategy(annotation)
        if issubclass(annotation, Enum):
            return st.sampled_from(list(annotation))
        if annotation is bool:
            return st.booleans()
        if annotation is int:
            return st.integers(min_value=0, max_value=10**6)
        if annotation is float:
            return st.floats(min_value=0, max_value=10**6, allow_nan=False)
        if annotation is str:
            return st.text(max_size=20)
        if annotation is datetime:
            return st.datetimes(timezones=st.just(UTC))
    raise NotImplementedError(f"no strategy for {annotation!r}")


def pattern_of(info: FieldInfo) -> str | None:
    """The regular expression a string field must match, if any."""
    return next((str(m.pattern) for m in info.metadata if getattr(m, "pattern", None)), None)


def field_strategy(info: FieldInfo) -> st.SearchStrategy[Any]:
    """Values of one field: by its pattern when it has one, else by its type."""
    pattern = pattern_of(info)
    if pattern is not None:
        return st.from_regex(pattern, fullmatch=True)
    return strategy_for(info.annotation)


def model_strategy(model: type[BaseModel]) -> st.SearchStrategy[Any]:
    """Valid instances of `model`: each field drawn by its type, the whole validated."""
    fields = {name: field_strategy(info) for name, info in model.model_fields.items()}

    def valid(values: dict[str, Any]) -> BaseModel | None:
        try:
            return model.model_validate(values)
        except ValidationError:
            return None

    return st.fixed_dictionaries(fields).map(valid).filter(lambda built: built is not None)


EVENTS: st.SearchStrategy[EventModel] = st.one_of(*(model_strategy(model) for model in EVENT_MODELS))
"""Any event of the stream."""


def plain_value(annotation: Any) -> Any:
    """One deterministic valid value for a field annotated `annotation`."""
    if annotation is Any or annotation is JsonValue:
        return {"rows": [[1, "Alice"]], "note": "a JSON value"}
    origin = get_origin(annotation)
    if origin is Annotated:
        return plain_value(get_args(annotation)[0])
    if origin in (Union, types.UnionType):
        choices = [arg for arg in get_args(annotation) if arg is not type(None)]
        return plain_value(choices[0])
    if origin is Literal:
        return get_args(annotation)[0]
    if origin is list:
        return [plain_value(get_args(annotation)[0])]
    if origin is dict:
        key, value = get_args(annotation)
        return {plain_value(key): plain_value(value)}
    if isinstance(annotation, type):
        if issubclass(annotation, BaseModel):
            return sample(annotation)
        if issubclass(annotation, Enum):
            return next(iter(annotation))
        if annotation in (bool, int, float):
            return annotation(1)
        if annotation is str:
            return "some words"
        if annotation is datetime:
            return datetime(2026, 11, 27, 10, 0, tzinfo=UTC)
    raise NotImplementedError(f"no value for {annotation!r}")


PATTERNED = {ARTIFACT_ID_PATTERN: "art_" + "0" * 64}
"""A plain value of each pattern a field of an event may have."""


def sample(model: type[M]) -> M:
    """An instance of `model` with every field set (optional ones too, where a plain value fits)."""
    values = {
        name: PATTERNED[pattern]
        if (pattern := pattern_of(info)) in PATTERNED
        else plain_value(info.annotation)
        for name, info in model.model_fields.items()
    }
    while True:
        try:
            return model.model_validate(values)
        except ValidationError as err:
            refused = {str(error["loc"][0]) for error in err.errors()}
            optional = [name for name in refused if not model.model_fields[name].is_required()]
            if not optional:
                raise
            for name in optional:
                del values[name]


SAMPLES: list[EventModel] = [sample(model) for model in EVENT_MODELS]
"""One event of each kind, every field set."""
