"""The AG-UI events of a session's stream (`api/agui/mapping.py`), the interrupts and the resume
entries (`api/agui/interrupts.py`), read back with the `ag-ui-protocol` models, no server needed."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from ag_ui.core import Event, EventType, Interrupt, ResumeEntry
from ag_ui.encoder import EventEncoder
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import TypeAdapter

from api.agui.interrupts import CANCELLED_REASON, decision_body, interrupt_of
from api.agui.mapping import RunMapper
from api.calls.errors import Problem
from contracts import (
    EventModel,
    GateAsk,
    GrantScope,
    InteractionRequest,
    InteractionType,
    QuestionAsk,
    TaskStreamChunk,
    ToolApprovalAsk,
)

from ...contracts.event_samples import EVENTS, SAMPLES

FRAMES: TypeAdapter[Event] = TypeAdapter(Event)
AT = datetime(2026, 11, 29, 10, 0, tzinfo=UTC)
ENDINGS = {
    "request_opened": "interrupt",
    "question_asked": "interrupt",
    "gate_opened": "interrupt",
    "approval_counted": "interrupt",
    "turn_failed": "error",
    "turn_completed": "success",
    "session_ended": "success",
    "turn_cancelled": "cancelled",
    "session_cancelled": "cancelled",
}
"""The events that end a run, and how."""


def chunk(sequence: int, event: EventModel) -> TaskStreamChunk:
    return TaskStreamChunk(
        workflow_id="session:agui:t",
        chunk_type=type(event).chunk_type,
        sequence_id=sequence,
        content=event,
        timestamp=AT + timedelta(seconds=sequence),
        is_final=type(event).final,
    )


def sent(events: list[Any]) -> list[Any]:
    """Each event as the encoder sends it, read back by the package's models."""
    encoder = EventEncoder()
    read = []
    for event in events:
        text = encoder.encode(event)
        assert text.startswith("data: ") and text.endswith("\n\n") and text.count("\n") == 2
        read.append(FRAMES.validate_json(text.removeprefix("data: ")))
    return read


def test_every_event_kind_is_frames_the_protocol_reads() -> None:
    for sequence, event in enumerate(SAMPLES):
        mapper = RunMapper()
        events, ending = mapper.events(chunk(sequence, event))
        frames = sent([*events, *mapper.closing()])
        assert ending == ENDINGS.get(event.event), event.event
        kinds = [f.type for f in frames]
        if event.event == "turn_started":
            assert kinds == [], "the client has the message already"
        elif event.event == "turn_answered":
            assert kinds == [
                EventType.TEXT_MESSAGE_START,
                EventType.TEXT_MESSAGE_CONTENT,
                EventType.TEXT_MESSAGE_END,
            ]
        elif event.event == "turn_failed":
            assert kinds == [EventType.RUN_ERROR] and frames[0].code == event.reason_code  # type: ignore[attr-defined]
        elif event.event == "thinking":
            assert kinds[0] == EventType.REASONING_START and kinds[-1] == EventType.REASONING_END
        elif event.event == "tool_used":
            assert kinds[0] == EventType.TOOL_CALL_RESULT
        elif event.event == "tool_called":
            assert kinds[-2:] == [EventType.STEP_STARTED, EventType.STEP_FINISHED], (
                "closed before the run ends"
            )
        elif ending in (None, "cancelled"):
            [custom] = frames
            assert custom.type == EventType.CUSTOM and custom.name == f"synapse.{event.event}"
            assert custom.value["event"] == event.event and custom.value["text"]


def test_a_gated_call_is_one_tool_call_from_its_request_to_its_result() -> None:
    [asked] = [e for e in SAMPLES if e.event == "request_opened"]
    request = interrupt_request(ToolApprovalAsk(tool="sql", arguments={"sql": "DELETE FROM orders"}))
    mapper = RunMapper()
    opened, ending = mapper.events(chunk(0, asked.model_copy(update={"request": request})))
    assert ending == "interrupt"
    assert [f.type for f in sent(opened)] == [
        EventType.TOOL_CALL_START,
        EventType.TOOL_CALL_ARGS,
        EventType.TOOL_CALL_END,
    ]
    start, args, _ = sent(opened)
    assert start.tool_call_id == "ia-1" and json.loads(args.delta) == {"sql": "DELETE FROM orders"}
    [called] = [e for e in SAMPLES if e.event == "tool_called"]
    [used] = [e for e in SAMPLES if e.event == "tool_used"]
    ran, _ = mapper.events(chunk(1, called.model_copy(update={"interaction_id": "ia-1"})))
    assert [f.type for f in ran] == [EventType.STEP_STARTED], "announced already: no second start"
    done, _ = mapper.events(chunk(2, used.model_copy(update={"interaction_id": "ia-1"})))
    assert [(f.type, getattr(f, "tool_call_id", None)) for f in done] == [
        (EventType.TOOL_CALL_RESULT, "ia-1"),
        (EventType.STEP_FINISHED, None),
    ]


@settings(max_examples=60, deadline=None)
@given(st.lists(EVENTS, max_size=12))
def test_any_stream_makes_a_run_the_client_accepts(stream: list[EventModel]) -> None:
    """Whatever a session publishes, the run never leaves a call, message or step open when it
    ends, never finishes what it did not start, and says nothing after `RUN_ERROR`."""
    mapper = RunMapper()
    out: list[Any] = []
    for sequence, event in enumerate(stream):
        events, ending = mapper.events(chunk(sequence, event))
        out += events
        if ending is not None:
            if ending != "error":
                out += mapper.closing()
            break
    else:
        out += mapper.closing()
    open_calls: set[str] = set()
    open_steps: list[str] = []
    open_texts: set[str] = set()
    for index, frame in enumerate(sent(out)):
        match frame.type:
            case EventType.TOOL_CALL_START:
                open_calls.add(frame.tool_call_id)
            case EventType.TOOL_CALL_ARGS:
                assert frame.tool_call_id in open_calls
            case EventType.TOOL_CALL_END:
                open_calls.remove(frame.tool_call_id)
            case EventType.STEP_STARTED:
                open_steps.append(frame.step_name)
            case EventType.STEP_FINISHED:
                assert open_steps.pop() == frame.step_name
            case EventType.TEXT_MESSAGE_START:
                open_texts.add(frame.message_id)
            case EventType.TEXT_MESSAGE_END:
                open_texts.remove(frame.message_id)
            case EventType.RUN_ERROR:
                assert index == len(out) - 1, "nothing follows RUN_ERROR"
    assert not open_calls and not open_steps and not open_texts


def interrupt_request(ask: Any, interaction_id: str = "ia-1") -> InteractionRequest:
    kinds = {
        "tool_approval": InteractionType.TOOL_APPROVAL,
        "question": InteractionType.USER_INPUT,
        "gate": InteractionType.CONFIRMATION,
    }
    return InteractionRequest(
        interaction_id=interaction_id,
        interaction_type=kinds[ask.kind],
        workflow_id="session:agui:t",
        content={},
        timestamp=AT,
        expires_at=AT + timedelta(minutes=5),
        ask=ask,
    )


TOOL = ToolApprovalAsk(tool="sql", arguments={"sql": "DELETE FROM orders"}, grants=[GrantScope.SESSION])
QUESTION = QuestionAsk(question="Which region?")
GATE = GateAsk(task_id="report", task_uuid="0" * 36, prompt="Publish the report?")


@pytest.mark.parametrize("ask", [TOOL, QUESTION, GATE], ids=lambda a: a.kind)
def test_a_pending_request_is_an_interrupt_with_the_schema_of_its_answer(ask: Any) -> None:
    interrupt = interrupt_of(interrupt_request(ask))
    wire = interrupt.model_dump(mode="json", by_alias=True)
    assert Interrupt.model_validate(wire) == interrupt
    assert wire["id"] == "ia-1" and wire["reason"] == ask.kind and wire["message"]
    assert wire["expiresAt"] == "2026-11-29T10:05:00Z"
    assert (wire.get("toolCallId") == "ia-1") is (ask.kind == "tool_approval")
    schema = wire["responseSchema"]
    assert schema["type"] == "object" and schema["additionalProperties"] is False
    if ask.kind == "tool_approval":
        assert schema["properties"]["grant"] == {"enum": ["session"]} and "editedArgs" in schema["properties"]


def entry(
    payload: Any = None, status: str = "resolved", metadata: dict[str, Any] | None = None
) -> ResumeEntry:
    return ResumeEntry(interrupt_id="ia-1", status=status, payload=payload, metadata=metadata)


def test_resume_entries_are_decisions_or_name_what_is_wrong() -> None:
    tool, question = interrupt_request(TOOL), interrupt_request(QUESTION)
    approved = decision_body(
        0,
        entry({"approved": True, "editedArgs": {"sql": "DELETE FROM orders WHERE id = 1"}}),
        tool,
        "agui-run:r",
    )
    assert not isinstance(approved, list)
    assert approved.approved is True and approved.response_data == {
        "arguments": {"sql": "DELETE FROM orders WHERE id = 1"}
    }
    assert approved.metadata == {"message_id": "agui-run:r"}, "the run's stream starts at its decision"
    denied = decision_body(0, entry(status="cancelled", metadata={"reason": "not today"}), tool, "m")
    assert not isinstance(denied, list) and (denied.approved, denied.user_message) == (False, "not today")
    bare = decision_body(0, entry(status="cancelled"), question, "m")
    assert not isinstance(bare, list) and (bare.approved, bare.user_message) == (False, CANCELLED_REASON)
    answered = decision_body(0, entry("eu-west"), question, "m")
    assert not isinstance(answered, list) and answered.response_data == {"text": "eu-west"}

    def problems(payload: Any, request: InteractionRequest = tool, index: int = 2) -> list[tuple[Any, ...]]:
        made = decision_body(index, entry(payload), request, "m")
        assert isinstance(made, list)
        return [p.loc for p in made if isinstance(p, Problem)]

    assert problems({"approved": "yes"}) == [("resume", 2, "payload", "approved")]
    assert problems({}) == [("resume", 2, "payload", "approved")]
    assert problems({"approved": True, "grant": "forever"}) == [("resume", 2, "payload", "grant")]
    assert problems({"approved": False, "editedArgs": {}}) == [("resume", 2, "payload", "approved")]
    assert problems({"approved": True, "arguments": {}}) == [("resume", 2, "payload")]
    assert problems(["yes"]) == [("resume", 2, "payload")]
    assert problems({"answer": ""}, question) == [("resume", 2, "payload", "answer")]
