"""What a chat is told of an event, as the `deliver_message` activity sends it.

Mostly an event's line; a few are worded for a chat: the turn's answer as it is, a question to
answer by replying, a request nobody decided in time, one that escalated, a cancelled turn.
Chinese first where the chat's people are told to do something.
"""

from __future__ import annotations

from contracts import (
    DecisionTaken,
    GraphStarted,
    InteractionRequest,
    InteractionType,
    QuestionAsked,
    ReplyRefused,
    RequestEscalated,
    SessionCancelled,
    StreamEvent,
    TurnAnswered,
    TurnCancelled,
    TurnFailed,
)
from contracts.experience import answer_text

from .decisions import decision_text, timed_out
from .lines import line_of
from .requests import question_of
from .turns import failed_text


def chat_text(event: StreamEvent, request: InteractionRequest | None = None) -> str:
    """The text a chat gets for `event` (about `request`, when it concerns one)."""
    if isinstance(event, TurnAnswered):
        return answer_text(event.answer)
    if isinstance(event, TurnFailed):
        return failed_text(event)
    if isinstance(event, SessionCancelled):
        return "The session was cancelled."
    if isinstance(event, TurnCancelled):
        said = f"{event.by} cancelled this request" + (f": {event.reason}" if event.reason else "")
        return f"已取消 / Cancelled: {said}."
    if isinstance(event, QuestionAsked):
        asked = event.request
        return f"❓ {question_of(asked)}\n（直接回复即可回答 / Reply in this chat to answer · {asked.interaction_id}）"
    if isinstance(event, DecisionTaken):
        if timed_out(event):
            question = request is not None and request.interaction_type == InteractionType.USER_INPUT
            what = "answered" if question else "approved"
            return f"操作已取消（超时）/ Cancelled: nobody {what} `{event.interaction_id}` in time."
        return decision_text(event)
    if isinstance(event, RequestEscalated):
        return f"⏫ `{event.interaction_id}` is still waiting for a decision; please decide:"
    if isinstance(event, GraphStarted):
        return f"Running a task graph of {len(event.tasks)} tasks ({event.workflow_id})."
    if isinstance(event, ReplyRefused):
        return event.reason
    return line_of(event).text
