"""How a session's turn ends: what the chat and the stream are told, and what is remembered.

The chat gets the outcome in a sentence (`outbox.outcome_text`); the stream gets the answer (a
`response` chunk) or why there is none (an `error` chunk), then the turn's final `complete` chunk
(a cancelled turn has told everyone already). The experience index keeps the question and the
answer's preview for recall. Publishing issues no commands; the chat's text is an activity the
outbox sends in order.
"""

from __future__ import annotations

from datetime import datetime

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from contracts import ExperienceRecord, InboundMessage, SessionConfig, TaskChunkType, TurnToRemember
    from contracts.experience import preview

    from .state import SessionState

from ..agent.host import LoopOutcome
from ..stream.chunks import Publish
from .outbox import ChannelOutbox, outcome_text


def told(
    outcome: LoopOutcome, max_turns: int, publish: Publish, outbox: ChannelOutbox, *, reply_to: str | None
) -> None:
    """Tell the chat and the stream how the turn ended."""
    outbox.text(outcome_text(outcome, max_turns), reply_to=reply_to)
    if outcome.kind == "answer":
        content = outcome.answer if isinstance(outcome.answer, str | dict) else {"answer": outcome.answer}
        publish(TaskChunkType.RESPONSE, content)
    elif outcome.kind == "plan":
        publish(
            TaskChunkType.ERROR, {"error": "the agent proposed a task graph; sessions cannot run graphs yet"}
        )
    elif outcome.kind == "failure" and outcome.failure is not None:
        publish(TaskChunkType.ERROR, outcome.failure.model_dump(mode="json"))
    elif outcome.kind == "max_turns":
        publish(
            TaskChunkType.ERROR, {"error": f"the agent did not answer within max_turns={max_turns} steps"}
        )
    if outcome.kind != "cancelled":
        publish(TaskChunkType.COMPLETE, {"turn_complete": True}, is_final=True)


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
        answer=preview(outcome_text(outcome, config.max_turns)),
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
