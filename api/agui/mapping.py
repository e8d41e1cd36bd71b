"""A session's stream events, as the AG-UI events of one run (`docs/ag-ui.md` has the table).

`RunMapper.events(chunk)` answers the AG-UI events a chunk's event is and, for the events that end
the run, how it ends: a request waiting for a person (`interrupt`: the caller lists every pending
request), the turn's end (`success`, `cancelled`), or its failure (`RUN_ERROR`, nothing may follow).
Tool calls and text messages are opened and closed in one go; a step is open only while a tool runs,
and `closing()` finishes it before the run ends (a client refuses a run that ends with one open).

Ids: `toolCallId` is the interaction id of a gated call (known from its request, its decision, its
run and its result); an ungated call's is its `ToolCalled` chunk's message id. A message id is
`<sequence id>@<chunk time>`, unique also across runs of a session restarted after its end.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

from ag_ui.core import (
    BaseEvent,
    CustomEvent,
    ReasoningEndEvent,
    ReasoningMessageContentEvent,
    ReasoningMessageEndEvent,
    ReasoningMessageStartEvent,
    ReasoningStartEvent,
    RunErrorEvent,
    StepFinishedEvent,
    StepStartedEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    ToolCallArgsEvent,
    ToolCallEndEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
)

from contracts import (
    ApprovalCounted,
    Asking,
    DecisionTaken,
    SessionCancelled,
    SessionEnded,
    TaskStreamChunk,
    Thinking,
    ToolApprovalAsk,
    ToolCalled,
    ToolUsed,
    TurnAnswered,
    TurnCancelled,
    TurnCompleted,
    TurnFailed,
    TurnStarted,
)
from contracts.events import EventModel
from core.wording import line_of

Ending = Literal["interrupt", "success", "cancelled", "error"]
"""How a run ends: a request waits (its interrupts), the turn ended or was cancelled, or it failed."""
CUSTOM_PREFIX = "synapse."
"""`CUSTOM` events are named `synapse.<event>` (`synapse.decision_taken`, ...)."""


def message_id_of(chunk: TaskStreamChunk) -> str:
    """The AG-UI message id of what a chunk says (unique in the session's stream, across its runs)."""
    return f"{chunk.sequence_id}@{chunk.timestamp:%Y%m%dT%H%M%S%f}"


def custom(event: EventModel) -> CustomEvent:
    """An event AG-UI has no kind for: `CUSTOM synapse.<event>`, its JSON with its sentence (`text`)."""
    value = event.model_dump(mode="json", by_alias=True) | {"text": line_of(event).text}
    return CustomEvent(name=CUSTOM_PREFIX + event.event, value=value)


def tool_call(call_id: str, name: str, arguments: Any, parent: str | None = None) -> list[BaseEvent]:
    """A proposed call, opened and closed: its start, its arguments (a JSON string), its end."""
    return [
        ToolCallStartEvent(tool_call_id=call_id, tool_call_name=name, parent_message_id=parent),
        ToolCallArgsEvent(tool_call_id=call_id, delta=json.dumps(arguments)),
        ToolCallEndEvent(tool_call_id=call_id),
    ]


def text_message(message_id: str, text: str) -> list[BaseEvent]:
    """An assistant's text message, opened and closed."""
    return [
        TextMessageStartEvent(message_id=message_id, role="assistant"),
        TextMessageContentEvent(message_id=message_id, delta=text),
        TextMessageEndEvent(message_id=message_id),
    ]


@dataclass
class RunMapper:
    """The AG-UI events of one run, from the session's chunks in order."""

    announced: dict[str, str] = field(default_factory=dict)
    """Interaction id -> kind of the requests this run's client knows (opened in it, or resumed)."""
    step: str | None = None
    """The step open now (a tool running), finished before the run ends."""
    calls: dict[str, str] = field(default_factory=dict)
    """Interaction id -> toolCallId of the calls that ran in this run."""
    last_call: str | None = None

    def events(self, chunk: TaskStreamChunk) -> tuple[list[BaseEvent], Ending | None]:
        """What `chunk` is in AG-UI terms, and whether (how) it ends the run."""
        event = chunk.content
        mid = message_id_of(chunk)
        match event:
            case TurnStarted():
                return [], None
            case Asking():
                request = event.request
                out: list[BaseEvent] = []
                ask = request.ask
                if isinstance(ask, ToolApprovalAsk):
                    if ask.edit_of:
                        note = f"edited into another kind of call; asked again as {request.interaction_id}"
                        out.append(
                            ToolCallResultEvent(message_id=mid, tool_call_id=ask.edit_of, content=note)
                        )
                    out += tool_call(request.interaction_id, ask.tool, ask.arguments)
                self.announced[request.interaction_id] = ask.kind
                return out, "interrupt"
            case ApprovalCounted():
                return [custom(event)], "interrupt"
            case DecisionTaken():
                out = [custom(event)]
                if not event.approved and self.announced.get(event.interaction_id) == "tool_approval":
                    why = f"denied by {event.decided_by}" + (f": {event.comment}" if event.comment else "")
                    content = json.dumps({"ok": False, "error": why})
                    out.append(
                        ToolCallResultEvent(
                            message_id=mid, tool_call_id=event.interaction_id, content=content
                        )
                    )
                return out, None
            case Thinking():
                return [
                    ReasoningStartEvent(message_id=mid),
                    ReasoningMessageStartEvent(message_id=mid, role="reasoning"),
                    ReasoningMessageContentEvent(message_id=mid, delta=event.text),
                    ReasoningMessageEndEvent(message_id=mid),
                    ReasoningEndEvent(message_id=mid),
                ], None
            case ToolCalled():
                return self._called(event, mid), None
            case ToolUsed():
                return self._used(event, mid), None
            case TurnAnswered():
                answer = event.answer
                return text_message(mid, answer if isinstance(answer, str) else json.dumps(answer)), None
            case TurnFailed():
                failed = RunErrorEvent(message=line_of(event).text, code=str(event.reason_code))
                return [*self.closing(), failed], "error"
            case TurnCompleted() | SessionEnded():
                return [], "success"
            case TurnCancelled() | SessionCancelled():
                return [custom(event)], "cancelled"
        return [custom(event)], None

    def _called(self, event: ToolCalled, mid: str) -> list[BaseEvent]:
        out: list[BaseEvent] = []
        iid = event.interaction_id
        call_id = iid if iid is not None and iid in self.announced else None
        if call_id is None:  # ungated, or allowed by a grant or a rule: the client has not seen it
            call_id = iid or mid
            out += tool_call(call_id, event.tool_name, event.tool_params)
        if iid is not None:
            self.calls[iid] = call_id
        self.last_call = call_id
        out += self.closing()
        self.step = f"tool {event.tool_name}"
        out.append(StepStartedEvent(step_name=self.step))
        return out

    def _used(self, event: ToolUsed, mid: str) -> list[BaseEvent]:
        iid = event.interaction_id
        call_id = self.calls.get(iid, iid) if iid is not None else self.last_call
        result = json.dumps(event.result.model_dump(mode="json", exclude_none=True))
        out: list[BaseEvent] = [
            ToolCallResultEvent(message_id=mid, tool_call_id=call_id or mid, content=result)
        ]
        return out + self.closing()

    def closing(self) -> list[BaseEvent]:
        """What must be finished before the run ends (or another step starts): the open step."""
        if self.step is None:
            return []
        finished = StepFinishedEvent(step_name=self.step)
        self.step = None
        return [finished]
