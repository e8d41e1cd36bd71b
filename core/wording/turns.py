"""How a turn ended without an answer, in a sentence."""

from __future__ import annotations

from contracts import TurnFailed, TurnFailure


def failed_text(event: TurnFailed) -> str:
    """`The agent failed (MODEL_ERROR): ...`, `The agent did not answer within 10 steps.`, ..."""
    if event.reason_code == TurnFailure.PLAN:
        return "The agent proposed a task graph; sessions cannot run graphs yet."
    if event.reason_code == TurnFailure.MAX_TURNS:
        return f"The agent did not answer within {event.max_turns} steps."
    if event.failure is None:
        return "The agent failed without details."
    return f"The agent failed ({event.failure.type}): {event.failure.message}"
