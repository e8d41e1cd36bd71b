"""Each event of a stream as one line of a conversation, with its tone.

The REPL prints the line in its tone's colour, the console shows it with its tone's class (the
API sends both beside the event), headless runs print some on stderr. Requests show their line
where nothing draws them as a card or a prompt; an answer's line is the answer itself (rendered
as Markdown where that is possible).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import singledispatch
from typing import Literal

from contracts import (
    ApprovalCounted,
    Asking,
    CommandEnded,
    CommandFailed,
    DecisionTaken,
    DeliveryFailed,
    EdgeChanged,
    Ended,
    EventModel,
    Finished,
    GrantMade,
    GrantRevoked,
    GraphCancelled,
    GraphChanged,
    GraphRefused,
    GraphStarted,
    GraphStatus,
    Output,
    PlanRefused,
    ReplyRefused,
    RequestEscalated,
    SessionCancelled,
    SessionStatusChanged,
    TaskChanged,
    TaskPaused,
    TaskRolledBack,
    Thinking,
    ToolCalled,
    ToolRefused,
    ToolRestarted,
    ToolUsed,
    TurnAnswered,
    TurnCancelled,
    TurnCompleted,
    TurnFailed,
    TurnStarted,
)
from contracts.experience import answer_text

from .decisions import counted_text, decision_text, escalated_text
from .requests import asking_text
from .tools import called_text, used_text
from .turns import failed_text

Tone = Literal["ok", "bad", "note", "call", "graph", "thinking", "plain"]
"""How a line reads: good news, bad news, a note, a tool called, a graph's progress, a thought, plain."""


@dataclass(frozen=True)
class Line:
    """An event in words."""

    text: str
    tone: Tone = "plain"


@singledispatch
def line_of(event: EventModel) -> Line:
    """The event as one line (every event has one)."""
    return Line(type(event).__name__)


@line_of.register
def _(event: Asking) -> Line:
    return Line(asking_text(event), "call")


@line_of.register
def _(event: DecisionTaken) -> Line:
    return Line(decision_text(event), "ok" if event.approved else "bad")


@line_of.register
def _(event: ApprovalCounted) -> Line:
    return Line(counted_text(event), "note")


@line_of.register
def _(event: RequestEscalated) -> Line:
    return Line(escalated_text(event), "note")


@line_of.register
def _(event: ReplyRefused) -> Line:
    return Line(f"✗ {event.reason}", "bad")


@line_of.register
def _(event: GrantMade) -> Line:
    return Line(f"granted: {event.comment}", "ok")


@line_of.register
def _(event: GrantRevoked) -> Line:
    return Line(f"{event.grant_id} revoked by {event.revoked_by}", "note")


@line_of.register
def _(event: TurnStarted) -> Line:
    return Line(f"{event.sender}: {event.message}")


@line_of.register
def _(event: Thinking) -> Line:
    return Line(event.text, "thinking")


@line_of.register
def _(event: ToolCalled) -> Line:
    return Line(called_text(event), "call")


@line_of.register
def _(event: ToolRestarted) -> Line:
    return Line(f"{event.tool_name}: starting afresh, the last one was lost with its worker", "note")


@line_of.register
def _(event: ToolUsed) -> Line:
    return Line(used_text(event), "ok" if event.result.ok else "bad")


@line_of.register
def _(event: ToolRefused) -> Line:
    return Line(f"✗ {event.tool_name}: {event.error}", "bad")


@line_of.register
def _(event: TurnAnswered) -> Line:
    return Line(answer_text(event.answer))


@line_of.register
def _(event: TurnFailed) -> Line:
    return Line(f"✗ {failed_text(event)}", "bad")


@line_of.register
def _(event: TurnCompleted) -> Line:
    return Line("the turn is over")


@line_of.register
def _(event: TurnCancelled) -> Line:
    why = f": {event.reason}" if event.reason else ""
    return Line(f"✗ turn cancelled by {event.by}{why}", "note")


@line_of.register
def _(event: Output) -> Line:
    return Line(event.text.removesuffix("\n"))


@line_of.register
def _(event: CommandEnded) -> Line:
    return Line(event.text, "ok" if event.command_success is not False else "bad")


@line_of.register
def _(event: CommandFailed) -> Line:
    return Line(f"✗ {event.text}", "bad")


@line_of.register
def _(event: SessionStatusChanged) -> Line:
    why = f": {event.reason}" if event.reason else ""
    return Line(f"session {event.status}{why}", "note")


@line_of.register
def _(event: Ended) -> Line:
    if isinstance(event, SessionCancelled):
        return Line(f"✗ session cancelled: {event.reason}", "note")
    return Line(f"session {event.status}: {event.reason}", "note")


@line_of.register
def _(event: DeliveryFailed) -> Line:
    if event.via == "webhook":
        return Line(f"✗ could not notify {event.to} of {event.what}: {event.reason}", "bad")
    what = "message" if event.what == "event" else event.what
    return Line(f"✗ could not deliver a {what} to {event.to}: {event.reason}", "bad")


@line_of.register
def _(event: GraphStarted) -> Line:
    return Line(f"◆ task graph {event.graph_id}: {', '.join(event.tasks)}", "graph")


@line_of.register
def _(event: TaskChanged) -> Line:
    instance = f" #{event.instance}" if event.instance is not None else ""
    version = f" v{event.version}" if (event.version or 1) > 1 else ""
    why = f" ({event.reason})" if event.reason else ""
    return Line(f"◆ graph task {event.task_id}{instance}{version}: {event.status}{why}", "graph")


@line_of.register
def _(event: EdgeChanged) -> Line:
    error = f": {event.error}" if event.error else ""
    return Line(f"◆ edge {event.edge}: {event.status}{error}", "graph")


@line_of.register
def _(event: TaskPaused) -> Line:
    return Line(
        f"◆ graph task {event.task_id}: {'paused' if event.paused else 'resumed'} by {event.by}", "graph"
    )


@line_of.register
def _(event: TaskRolledBack) -> Line:
    reset = f"; reset {', '.join(event.reset)}" if event.reset else ""
    return Line(
        f"◆ graph task {event.task_id} rolled back by {event.rolled_back_by}: runs as v{event.next_version}{reset}",
        "graph",
    )


@line_of.register
def _(event: GraphChanged) -> Line:
    if event.change == "reopened":
        why = f": {event.reason}" if event.reason else ""
        return Line(f"◆ graph reopened by {event.by}{why}", "graph")
    added = f"{len(event.tasks)} task{'' if len(event.tasks) == 1 else 's'}"
    return Line(
        f"◆ graph extended by {event.by}: {added} ({', '.join(event.tasks)}), {event.edges} edges", "graph"
    )


@line_of.register
def _(event: PlanRefused) -> Line:
    return Line(f"✗ {event.task_id}: its plan was refused: {event.reason}", "bad")


@line_of.register
def _(event: GraphRefused) -> Line:
    return Line(f"✗ graph {event.status}: {event.reason}", "bad")


@line_of.register
def _(event: Finished) -> Line:
    why = f": {event.reason}" if event.reason else ""
    if isinstance(event, GraphCancelled):
        return Line(f"✗ graph cancelled{why}", "note")
    return Line(f"◆ graph {event.status}{why}", "graph" if event.status == GraphStatus.COMPLETED else "bad")
