"""The stream's events (`contracts/events.py`): every one goes through Temporal's payload converter
and JSON and comes back itself, as the chunk type it says."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from pydantic import TypeAdapter
from temporalio.contrib.pydantic import pydantic_data_converter

from contracts import EVENT_MODELS, EventModel, SentChunk, StreamEvent, TaskChunkType, TaskStreamChunk
from core.wording import line_of
from tests.support import published

from .event_samples import EVENTS, SAMPLES

ANY_EVENT: TypeAdapter[StreamEvent] = TypeAdapter(StreamEvent)


def through_the_converter(chunk: TaskStreamChunk) -> TaskStreamChunk:
    converter = pydantic_data_converter.payload_converter
    [back] = converter.from_payloads(converter.to_payloads([chunk]), [TaskStreamChunk])
    assert isinstance(back, TaskStreamChunk)
    return back


@pytest.mark.parametrize("event", SAMPLES, ids=[type(e).__name__ for e in SAMPLES])
def test_each_kind_goes_through_the_payload_converter_as_itself(event: EventModel) -> None:
    chunk = published(event)
    back = through_the_converter(chunk)
    assert back == chunk and type(back.content) is type(event)
    assert back.chunk_type == type(event).chunk_type and back.is_final == type(event).final


@given(EVENTS)
@settings(max_examples=300, deadline=None)
def test_any_event_serializes_and_parses_back_to_itself_and_its_chunk_type(event: EventModel) -> None:
    assert ANY_EVENT.validate_json(event.model_dump_json()) == event
    chunk = published(event)
    parsed = TaskStreamChunk.model_validate_json(chunk.model_dump_json())
    assert parsed == chunk and parsed.chunk_type == type(event).chunk_type
    assert through_the_converter(chunk) == chunk
    line = line_of(event)
    sent = SentChunk.model_validate_json(
        SentChunk(**dict(chunk), text=line.text, tone=line.tone).model_dump_json()
    )
    assert sent.content == event and sent.text == line.text, "the API's words ride beside the event"


def test_every_event_is_one_of_the_union_and_names_its_own_kind() -> None:
    names = [model.model_fields["event"].default for model in EVENT_MODELS]
    assert len(set(names)) == len(names), "event names are unique"
    assert {type(e) for e in SAMPLES} == set(EVENT_MODELS)
    for model in EVENT_MODELS:
        assert isinstance(model.chunk_type, TaskChunkType), model.__name__
    assert {m.chunk_type for m in EVENT_MODELS} == set(TaskChunkType), "every chunk type is some event's"


def test_the_chunk_contract_has_no_untyped_dict() -> None:
    """A chunk's content is an event; its extras are the event's typed fields (no `metadata`)."""
    assert "metadata" not in TaskStreamChunk.model_fields
    content = TaskStreamChunk.model_json_schema()["properties"]["content"]
    assert "discriminator" in content and "oneOf" in content
