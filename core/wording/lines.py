"""Each event of a stream as one line of a conversation, with its tone.

The REPL prints the line in its tone's colour, the console shows it with its tone's class (the
API sends both beside the event), headless runs print some on stderr. Requests show their line
where nothing draws them as a card or a prompt; an answer's line is the answer itself (rendered
as Markdown where that is possible).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from contracts import GraphStatus
from contracts import events as ev
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


def line_of(event: ev.EventModel) -> Line:
    """The event as one line (every event has one)."""
    match event:
        case ev.Asking():
            return Line(asking_text(event), "call")
        case ev.DecisionTaken():
            return Line(decision_text(event), "ok" if event.approved else "bad")
        case ev.ApprovalCounted() | ev.RequestEscalated():
            said = counted_text(event) if isinstance(event, ev.ApprovalCounted) else escalated_text(event)
            return Line(said, "note")
        case ev.GrantMade():
            return Line(f"granted: {event.comment}", "ok")
        case ev.GrantRevoked():
            return Line(f"{event.grant_id} revoked by {event.revoked_by}", "note")
        case ev.TurnStarted():
            return Line(f"{event.sender}: {event.message}")
        case ev.Thinking():
            return Line(event.text, "thinking")
        case ev.ToolCalled():
            return Line(called_text(event), "call")
        case ev.ToolUsed():
            return Line(used_text(event), "ok" if event.result.ok else "bad")
        case ev.TurnAnswered():
            return Line(answer_text(event.answer))
        case ev.TurnCompleted():
            return Line("the turn is over")
    return _notice(event) or _progress(event)


def _notice(event: ev.EventModel) -> Line | None:
    """Something went wrong or stopped (a refusal, a failure, a cancellation); None: not that."""
    match event:
        case ev.ReplyRefused():
            said = event.reason
        case ev.ToolRefused():
            said = f"{event.tool_name}: {event.error}"
        case ev.TurnFailed():
            said = failed_text(event)
        case ev.CommandFailed():
            said = event.text
        case ev.PlanRefused():
            said = f"{event.task_id}: its plan was refused: {event.reason}"
        case ev.GraphRefused():
            said = f"graph {event.status}: {event.reason}"
        case ev.DeliveryFailed() if event.via == "webhook":
            said = f"could not notify {event.to} of {event.what}: {event.reason}"
        case ev.DeliveryFailed():
            said = f"could not deliver a {'message' if event.what == 'event' else event.what} to {event.to}: {event.reason}"
        case ev.TurnCancelled() | ev.SessionCancelled() | ev.GraphCancelled():
            return Line(f"✗ {_cancelled(event)}", "note")
        case _:
            return None
    return Line(f"✗ {said}", "bad")


def _cancelled(event: ev.TurnCancelled | ev.SessionCancelled | ev.GraphCancelled) -> str:
    if isinstance(event, ev.TurnCancelled):
        return f"turn cancelled by {event.by}" + (f": {event.reason}" if event.reason else "")
    what = "session" if isinstance(event, ev.SessionCancelled) else "graph"
    return f"{what} cancelled" + (f": {event.reason}" if event.reason else "")


def _progress(event: ev.EventModel) -> Line:
    """How a session, a graph or a running command goes on."""
    match event:
        case ev.CommandEnded():
            return Line(event.text, "ok" if event.command_success is not False else "bad")
        case ev.Output():
            return Line(event.text.removesuffix("\n"))
        case ev.ToolRestarted():
            return Line(f"{event.tool_name}: starting afresh, the last one was lost with its worker", "note")
        case ev.SessionStatusChanged():
            return Line(f"session {event.status}" + (f": {event.reason}" if event.reason else ""), "note")
        case ev.SessionEnded():
            return Line(f"session {event.status}: {event.reason}", "note")
        case ev.GraphFinished():
            why = f": {event.reason}" if event.reason else ""
            return Line(
                f"◆ graph {event.status}{why}", "graph" if event.status == GraphStatus.COMPLETED else "bad"
            )
    return Line(f"◆ {_graph_progress(event)}", "graph")


def _graph_progress(event: ev.EventModel) -> str:
    """A graph's (or its tasks') progress, after its `◆`."""
    match event:
        case ev.GraphStarted():
            return f"task graph {event.graph_id}: {', '.join(event.tasks)}"
        case ev.TaskChanged():
            instance = f" #{event.instance}" if event.instance is not None else ""
            version = f" v{event.version}" if (event.version or 1) > 1 else ""
            why = f" ({event.reason})" if event.reason else ""
            return f"graph task {event.task_id}{instance}{version}: {event.status}{why}"
        case ev.EdgeChanged():
            return f"edge {event.edge}: {event.status}" + (f": {event.error}" if event.error else "")
        case ev.TaskPaused():
            return f"graph task {event.task_id}: {'paused' if event.paused else 'resumed'} by {event.by}"
        case ev.TaskRolledBack():
            reset = f"; reset {', '.join(event.reset)}" if event.reset else ""
            return f"graph task {event.task_id} rolled back by {event.rolled_back_by}: runs as v{event.next_version}{reset}"
        case ev.GraphChanged() if event.change == "reopened":
            return f"graph reopened by {event.by}" + (f": {event.reason}" if event.reason else "")
        case ev.GraphChanged():
            added = f"{len(event.tasks)} task{'' if len(event.tasks) == 1 else 's'}"
            return f"graph extended by {event.by}: {added} ({', '.join(event.tasks)}), {event.edges} edges"
    return type(event).__name__
