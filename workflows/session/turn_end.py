"""How a session's turn ends: what the chat and the stream are told, and what is remembered.

The stream gets the answer (`TurnAnswered`) or why there is none (`TurnFailed`), then the turn's
final `TurnCompleted` (a cancelled turn has told everyone already); the chat is told the same
event (its words are the delivering activity's). The experience index keeps the question and the
answer's preview for recall. Publishing issues no commands; the chat's message is an activity the
outbox sends in order.
"""

from __future__ import annotations

from datetime import datetime

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from contracts import (
        ExperienceRecord,
        InboundMessage,
        SessionCancelled,
        SessionConfig,
        SessionStatus,
        TurnAnswered,
        TurnCompleted,
        TurnFailed,
        TurnFailure,
        TurnToRemember,
    )
    from contracts.experience import answer_text, preview

    from .state import SessionState

from ..agent.host import LoopOutcome
from ..stream.chunks import Publish
from .outbox import ChannelOutbox


def ending(outcome: LoopOutcome, max_turns: int) -> TurnAnswered | TurnFailed | None:
    """The event of how the turn ended: its answer, or why there is none (None: cancelled)."""
    if outcome.kind == "answer":
        return TurnAnswered(answer=outcome.answer)
    if outcome.kind == "plan":
        return TurnFailed(reason_code=TurnFailure.PLAN)
    if outcome.kind == "failure":
        return TurnFailed(reason_code=TurnFailure.AGENT_FAILED, failure=outcome.failure)
    if outcome.kind == "max_turns":
        return TurnFailed(reason_code=TurnFailure.MAX_TURNS, max_turns=max_turns)
    return None


def told(
    outcome: LoopOutcome,
    max_turns: int,
    publish: Publish,
    outbox: ChannelOutbox,
    *,
    reply_to: str | None,
    cancel_reason: str | None = None,
) -> None:
    """Tell the chat and the stream how the turn ended (the session's cancel: the chat only; the
    stream hears it when the session ends)."""
    event = ending(outcome, max_turns)
    if event is None:
        cancelled = SessionCancelled(status=SessionStatus.CANCELLED, reason=cancel_reason or "cancelled")
        outbox.tell(cancelled, reply_to=reply_to)
        return
    outbox.tell(event, reply_to=reply_to)
    publish(event)
    publish(TurnCompleted())


def remembered(outcome: LoopOutcome, max_turns: int) -> str:
    """What the experience index keeps as a turn's answer: the answer, or why there is none."""
    if outcome.kind == "answer":
        return answer_text(outcome.answer)
    if outcome.kind == "failure" and outcome.failure is not None:
        return f"failed ({outcome.failure.type}): {outcome.failure.message}"
    if outcome.kind == "max_turns":
        return f"no answer within {max_turns} steps"
    return "a task graph was proposed" if outcome.kind == "plan" else "cancelled"


def experience_of(
    owner_id: str,
    state: SessionState,
    config: SessionConfig,
    message: InboundMessage,
    outcome: LoopOutcome,
    at: datetime,
) -> ExperienceRecord:
    """What the experience index keeps of a finished turn."""
    return ExperienceRecord(
        owner_id=owner_id,
        turn=state.turns_total,
        agent_id=config.agent_id,
        asked_by=message.sender_id,
        at=at,
        outcome=outcome.kind,
        question=preview(message.content),
        answer=preview(remembered(outcome, config.max_turns)),
        project=config.project,
    )


def to_remember(state: SessionState, config: SessionConfig, message: InboundMessage) -> TurnToRemember:
    """The turn `message` starts, for the step that answers it to record (as `experience_of` would
    after the turn, whose count is then one more)."""
    return TurnToRemember(
        turn=state.turns_total + 1,
        asked_by=message.sender_id,
        question=preview(message.content),
        project=config.project,
    )
